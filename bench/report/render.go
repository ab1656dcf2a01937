package main

import (
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed tmpl/*.tmpl
var tmplFS embed.FS

// The prose around each section's tables lives in tmpl/: R is the run
// record, P the group's record, T the section's rendered tables.
var tmpls = template.Must(template.New("").Option("missingkey=zero").Funcs(template.FuncMap{
	"sub":   func(a, b int) int { return a - b },
	"lower": strings.ToLower,
}).ParseFS(tmplFS, "tmpl/*.tmpl"))

type tmplData struct {
	R, P, T map[string]string
}

func render(name string, d *runData, group, tables map[string]string) (string, error) {
	var b strings.Builder
	if err := tmpls.ExecuteTemplate(&b, name, tmplData{R: d.run, P: group, T: tables}); err != nil {
		return "", fmt.Errorf("report: template %s: %w", name, err)
	}
	return b.String(), nil
}
