package main

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// configsSection prints every contender's config as the run wrote it, with
// the directives that matter for its rows and why an expert would pick them,
// and every distinct command line the run measured.
func configsSection(d *runData) string {
	if len(d.configs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Contender configs\n\n" +
		"What each contender ran with, as the run wrote it (the work dir shown as `WORK`, ports picked per run): the " +
		"directives that matter for its rows and why its own experts would pick them for those rows; the full files " +
		"below. Access logs are off for every contender (ramjet writes none; Varnish logs only to its shared memory).\n\n")
	t := newTable("config", "groups", "used by", "file", "sha256", "key directives", "why")
	configs := uniqueConfigs(d.configs)
	for _, c := range configs {
		sum := c.param("sha256")
		if len(sum) > 12 {
			sum = sum[:12]
		}
		t.add("`"+c.param("id")+"`", c.param("group"), c.param("used_by"), "`"+c.param("file")+"`", "`"+sum+"`",
			c.param("key"), c.param("why"))
	}
	b.WriteString(t.String() + "\n")
	for _, c := range configs {
		b.WriteString(details(fmt.Sprintf("%s (%s)", c.param("id"), c.param("file")),
			"```"+c.param("lang")+"\n"+strings.TrimRight(d.short(c.param("text")), "\n")+"\n```\n"))
	}
	b.WriteString(commandsBlock(d))
	return b.String()
}

// uniqueConfigs keeps one record per config id and digest (the connection
// groups restart the same servers), its "group" naming every group that ran it.
func uniqueConfigs(cs []Record) []Record {
	var out []Record
	at := map[string]int{}
	for _, c := range cs {
		k := c.param("id") + " " + c.param("sha256")
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			c.Params = maps.Clone(c.Params)
			out = append(out, c)
			continue
		}
		if g := c.param("group"); !strings.Contains(", "+out[i].Params["group"]+", ", ", "+g+", ") {
			out[i].Params["group"] += ", " + g
		}
	}
	return out
}

// commandsBlock lists each distinct measured command once per group, with
// the rounds it ran in.
func commandsBlock(d *runData) string {
	type cmdKey struct{ group, cmd string }
	var keys []cmdKey
	rounds := map[cmdKey][]string{}
	groups := make([]string, 0, len(d.rows))
	for g := range d.rows {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		for _, r := range d.rows[g] {
			if r.Cmd == "" {
				continue
			}
			k := cmdKey{g, d.short(r.Cmd)}
			if _, ok := rounds[k]; !ok {
				keys = append(keys, k)
			}
			rounds[k] = append(rounds[k], fmt.Sprint(r.Round))
		}
	}
	if len(keys) == 0 {
		return ""
	}
	t := newTable("group", "rounds", "command")
	for _, k := range keys {
		t.add(k.group, strings.Join(dedupe(rounds[k]), " "), "`"+strings.ReplaceAll(k.cmd, "|", `\|`)+"`")
	}
	return details("Every measured command", t.String())
}

func dedupe(v []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
