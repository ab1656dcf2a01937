package accesslog

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// Format is the layout of a line.
type Format uint8

const (
	// Combined is Apache's and nginx's combined format, byte for byte as
	// nginx writes it, so that log analysers and fail2ban filters read it
	// unchanged: the remote user is always "-" (it would come from
	// Authorization, which is never logged).
	Combined Format = iota + 1
	// Ramjet is Combined followed by the Cache-Status the client got
	// (quoted), the request time and the origin time in seconds ("-"
	// without an origin exchange) and the site; a request the WAF
	// matched rules in has one more, quoted, field: "waf=OUTCOME
	// score=N rules=ID,ID data=MATCHED".
	Ramjet
	// JSON is one object per line with named fields (JSONFields).
	JSON
)

// JSONFields are the names of a JSON line's fields, in their order.
var JSONFields = []string{"time", "remote_addr", "request_method", "request_uri", "server_protocol", "status",
	"body_bytes_sent", "http_referer", "http_user_agent", "cache_status", "request_time", "origin_time", "site", "waf"}

// ParseFormat reads a format's name: combined, ramjet or json.
func ParseFormat(name string) (Format, error) {
	switch name {
	case "combined":
		return Combined, nil
	case "ramjet":
		return Ramjet, nil
	case "json":
		return JSON, nil
	}
	return 0, fmt.Errorf("accesslog: unknown format %q (combined, ramjet or json)", name)
}

func (f Format) String() string {
	switch f {
	case Combined:
		return "combined"
	case Ramjet:
		return "ramjet"
	case JSON:
		return "json"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Record is what a line tells of one request. Its slices are only read
// during Append.
type Record struct {
	// Time is the line's time, written in its location. ramjet gives the
	// time the request came, as Apache does; nginx writes when it ended.
	Time   time.Time
	Addr   net.IP // the client's address
	Method []byte
	// URI is the request target as the client sent it, query included.
	URI      []byte
	Protocol []byte // "HTTP/1.1", "HTTP/2.0"
	// Line is the request line as received, for a request refused before
	// it could be split into Method, URI and Protocol (which are then
	// empty); with neither, the request is written "-", as nginx writes a
	// request it read no line of.
	Line   []byte
	Status int
	// Bytes is the length of the body sent; negative when not known (a
	// stream without a length).
	Bytes              int64
	Referer, UserAgent []byte
	CacheStatus        []byte // the Cache-Status field sent; nil: none
	RequestTime        time.Duration
	// OriginTime is the time the upstream took to answer; negative when
	// the request was answered without one.
	OriginTime time.Duration
	Site       []byte
	// WAF is what the firewall found in the request; nil when it was not
	// inspected or nothing matched.
	WAF *WAF
}

// WAF is the firewall's word on a request that matched rules.
type WAF struct {
	Outcome string // "passed" (below the threshold), "detected" (detect mode), "blocked"
	Score   int    // the anomaly score, 0 when no evaluation ran to a block
	Rules   []int  // the rules that matched
	Data    string // what the gravest one matched, cut short
}

// Append appends rec's line, newline included, to dst. It allocates
// nothing once dst has room for the line.
func (f Format) Append(dst []byte, rec *Record) []byte {
	switch f {
	case JSON:
		dst = appendJSON(dst, rec)
	case Ramjet:
		dst = appendCombined(dst, rec)
		dst = appendRamjet(dst, rec)
	default:
		dst = appendCombined(dst, rec)
	}
	return append(dst, '\n')
}

// appendCombined is nginx's
// '$remote_addr - $remote_user [$time_local] "$request" $status
// $body_bytes_sent "$http_referer" "$http_user_agent"'.
func appendCombined(dst []byte, rec *Record) []byte {
	dst = appendAddr(dst, rec.Addr)
	dst = append(dst, " - - ["...)
	dst = appendTimeLocal(dst, rec.Time)
	dst = append(dst, `] "`...)
	dst = appendRequest(dst, rec)
	dst = append(dst, `" `...)
	dst = strconv.AppendInt(dst, int64(rec.Status), 10)
	dst = append(dst, ' ')
	if rec.Bytes < 0 {
		dst = append(dst, '-')
	} else {
		dst = strconv.AppendInt(dst, rec.Bytes, 10)
	}
	dst = append(dst, ' ')
	dst = appendQuotedOrDash(dst, rec.Referer)
	dst = append(dst, ' ')
	return appendQuotedOrDash(dst, rec.UserAgent)
}

// appendRequest is nginx's $request: the request line, parsed, as
// received, or "-".
func appendRequest(dst []byte, rec *Record) []byte {
	switch {
	case len(rec.Method) == 0 && len(rec.Line) > 0:
		return appendEscaped(dst, rec.Line)
	case len(rec.Method) == 0 && len(rec.URI) == 0:
		return append(dst, '-')
	}
	dst = appendEscaped(dst, rec.Method)
	dst = append(dst, ' ')
	dst = appendEscaped(dst, rec.URI)
	dst = append(dst, ' ')
	return appendEscaped(dst, rec.Protocol)
}

// appendRamjet adds ' "$cache_status" $request_time $origin_time $site'.
func appendRamjet(dst []byte, rec *Record) []byte {
	dst = append(dst, ' ')
	dst = appendQuotedOrDash(dst, rec.CacheStatus)
	dst = append(dst, ' ')
	dst = appendSeconds(dst, rec.RequestTime)
	dst = append(dst, ' ')
	if rec.OriginTime < 0 {
		dst = append(dst, '-')
	} else {
		dst = appendSeconds(dst, rec.OriginTime)
	}
	dst = append(dst, ' ')
	if len(rec.Site) == 0 {
		dst = append(dst, '-')
	} else {
		dst = appendEscaped(dst, rec.Site)
	}
	if w := rec.WAF; w != nil {
		dst = append(dst, ` "waf=`...)
		dst = append(dst, w.Outcome...)
		dst = append(dst, " score="...)
		dst = strconv.AppendInt(dst, int64(w.Score), 10)
		dst = append(dst, " rules="...)
		dst = appendRules(dst, w.Rules)
		dst = append(dst, " data="...)
		dst = appendEscaped(dst, []byte(w.Data))
		dst = append(dst, '"')
	}
	return dst
}

func appendRules(dst []byte, rules []int) []byte {
	for i, id := range rules {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(id), 10)
	}
	return dst
}

// appendJSON writes the fields of JSONFields; absent header fields are
// "" (as nginx's escape=json writes them), unknown numbers null.
func appendJSON(dst []byte, rec *Record) []byte {
	dst = append(dst, `{"time":"`...)
	dst = appendTimeISO(dst, rec.Time)
	dst = append(dst, `","remote_addr":"`...)
	dst = appendAddr(dst, rec.Addr)
	dst = append(dst, `","request_method":`...)
	dst = appendJSONString(dst, rec.Method)
	dst = append(dst, `,"request_uri":`...)
	if len(rec.Method) == 0 && len(rec.URI) == 0 {
		dst = appendJSONString(dst, rec.Line) // a line that could not be split
	} else {
		dst = appendJSONString(dst, rec.URI)
	}
	dst = append(dst, `,"server_protocol":`...)
	dst = appendJSONString(dst, rec.Protocol)
	dst = append(dst, `,"status":`...)
	dst = strconv.AppendInt(dst, int64(rec.Status), 10)
	dst = append(dst, `,"body_bytes_sent":`...)
	if rec.Bytes < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, rec.Bytes, 10)
	}
	dst = append(dst, `,"http_referer":`...)
	dst = appendJSONString(dst, rec.Referer)
	dst = append(dst, `,"http_user_agent":`...)
	dst = appendJSONString(dst, rec.UserAgent)
	dst = append(dst, `,"cache_status":`...)
	dst = appendJSONString(dst, rec.CacheStatus)
	dst = append(dst, `,"request_time":`...)
	dst = appendSeconds(dst, rec.RequestTime)
	dst = append(dst, `,"origin_time":`...)
	if rec.OriginTime < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendSeconds(dst, rec.OriginTime)
	}
	dst = append(dst, `,"site":`...)
	dst = appendJSONString(dst, rec.Site)
	dst = append(dst, `,"waf":`...)
	if w := rec.WAF; w == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"outcome":`...)
		dst = appendJSONString(dst, []byte(w.Outcome))
		dst = append(dst, `,"score":`...)
		dst = strconv.AppendInt(dst, int64(w.Score), 10)
		dst = append(dst, `,"rules":[`...)
		dst = appendRules(dst, w.Rules)
		dst = append(dst, `],"data":`...)
		dst = appendJSONString(dst, []byte(w.Data))
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
