package main

import (
	"strings"
)

// runData is the records of one run, by kind.
type runData struct {
	run     map[string]string            // the run record
	groups  map[string]map[string]string // group name -> its group record
	configs []Record
	rows    map[string][]Record // group name -> its rows in file order
}

func index(recs []Record) *runData {
	d := &runData{run: map[string]string{}, groups: map[string]map[string]string{}, rows: map[string][]Record{}}
	for _, r := range recs {
		switch r.Kind {
		case kindRun:
			d.run = r.Params
		case kindGroup:
			d.groups[r.Group] = r.Params
		case kindConfig:
			d.configs = append(d.configs, r)
		case kindRow:
			d.rows[r.Group] = append(d.rows[r.Group], r)
		}
	}
	return d
}

// short replaces the run's work dir in s with "WORK": paths and ports differ
// per run, the rest of a command or config does not.
func (d *runData) short(s string) string {
	if w := d.run["work"]; w != "" {
		s = strings.ReplaceAll(s, w, "WORK")
	}
	return s
}

// words splits a group's space-separated list parameter.
func (d *runData) words(group, key string) []string {
	return strings.Fields(d.groups[group][key])
}
