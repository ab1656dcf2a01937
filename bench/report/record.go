package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Record kinds.
const (
	kindRow    = "row"    // one measured run of one contender
	kindRun    = "run"    // the run: date, command, machine, versions
	kindGroup  = "group"  // a group's settings and skip reason
	kindConfig = "config" // a contender's config file
)

// Record is one line of the records file. Rows carry the numbers; every
// string field of any record is also in Params, which is all that run, group
// and config records have. Zero means "not measured" for the numbers.
type Record struct {
	Kind      string `json:"kind"`
	Group     string `json:"group"`
	Round     int    `json:"round"`
	Workload  string `json:"workload"`
	Contender string `json:"contender"`
	Proto     string `json:"proto"`
	Tool      string `json:"tool"`
	Phase     string `json:"phase"` // idle group: step, hold, done

	RPS      float64 `json:"rps"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	Max      float64 `json:"max_ms"`
	Mean     float64 `json:"mean_ms"`
	SD       float64 `json:"sd_ms"`
	TimeMS   float64 `json:"time_ms"` // one sequential request (resume, WordPress miss)
	CPU      float64 `json:"cpu_us"`  // server CPU µs per request
	PHPCPU   float64 `json:"php_cpu_us"`
	RSS      float64 `json:"rss_kb"`
	PSS      float64 `json:"pss_kb"`
	FrontRSS float64 `json:"front_rss_kb"`
	BaseRSS  float64 `json:"base_rss_kb"`
	PeakRSS  float64 `json:"peak_rss_kb"`
	LastRSS  float64 `json:"last_rss_kb"`

	Requests int `json:"requests"`
	Errors   int `json:"errors"`
	Timeouts int `json:"timeouts"`
	Failed   int `json:"failed"`
	Conns    int `json:"conns"`
	Open     int `json:"open"`
	Opened   int `json:"opened"`
	NotOK    int `json:"not200"`
	Closed   int `json:"closed"`
	Workers  int `json:"workers"`
	Bytes    int `json:"bytes"` // body bytes per request

	// PHPCalls is nil when the count could not be read ("?").
	PHPCalls *float64 `json:"php_calls"`
	OriginMS float64  `json:"origin_cpu_ms"`

	ServerBusy float64 `json:"server_busy_pct"`
	LoadBusy   float64 `json:"load_busy_pct"`
	Other      float64 `json:"other_pct"`

	Check  string `json:"check"`
	TLS    string `json:"tls"`
	Cmd    string `json:"cmd"`
	Config string `json:"config"`

	Params map[string]string `json:"-"`
}

// param is a string field of the record, "" when absent.
func (r Record) param(k string) string { return r.Params[k] }

// Read decodes a records file; a line that is not a JSON object is an error
// naming its line number.
func Read(in io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20) // config records hold whole files
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		r, err := decode(line)
		if err != nil {
			return nil, fmt.Errorf("records line %d: %w", n, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	return out, nil
}

// decode fills the typed fields of a row only: run and group records use
// some of the same names for text ("conns": "1000").
func decode(line []byte) (Record, error) {
	var r Record
	var raw map[string]any
	if err := json.Unmarshal(line, &raw); err != nil {
		return r, err
	}
	r.Params = make(map[string]string, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			r.Params[k] = v
		case float64:
			r.Params[k] = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	r.Kind, r.Group = r.Params["kind"], r.Params["group"]
	if r.Kind == "" {
		return r, fmt.Errorf("no \"kind\"")
	}
	if r.Kind != kindRow {
		return r, nil
	}
	params := r.Params
	if err := json.Unmarshal(line, &r); err != nil {
		return r, err
	}
	r.Params = params
	return r, nil
}
