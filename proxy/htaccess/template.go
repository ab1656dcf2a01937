package htaccess

import (
	"strconv"
	"strings"
)

// A template is a string with mod_rewrite's expansions: $N (the rule's
// captures), %N (the last matched condition's), %{VAR}, %{ENV:name},
// %{HTTP:Header}. It is parsed once; expanding it appends to a buffer.
type template struct {
	parts []part
	// refs: it uses $N or %N, so its rule must keep captures.
	ruleRefs, condRefs bool
}

type partKind uint8

const (
	partLit partKind = iota
	partRuleRef
	partCondRef
	partVar
	partEnv
	partHeader
)

type part struct {
	kind partKind
	lit  string // partLit text; partEnv / partHeader name
	n    int    // partRuleRef / partCondRef index; partVar: a variable
}

// parseTemplate reads s; a backslash escapes the next character, as in
// mod_rewrite ("\$" is a dollar).
func parseTemplate(s string) (template, error) { return scanTemplate(s, true) }

// scanTemplate reads s; without rewrite, only $N expands.
func scanTemplate(s string, rewrite bool) (template, error) {
	var t template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{kind: partLit, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			lit.WriteByte(s[i])
		case (c == '$' || c == '%' && rewrite) && i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9':
			flush()
			k := partRuleRef
			if c == '%' {
				k = partCondRef
				t.condRefs = true
			} else {
				t.ruleRefs = true
			}
			t.parts = append(t.parts, part{kind: k, n: int(s[i+1] - '0')})
			i++
		case rewrite && c == '%' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return t, errBadVar(s[i:])
			}
			flush()
			p, err := varPart(s[i+2 : i+end])
			if err != nil {
				return t, err
			}
			t.parts = append(t.parts, p)
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return t, nil
}

type templateError string

func (e templateError) Error() string { return string(e) }

func errBadVar(s string) error {
	return templateError("unterminated variable " + strconv.Quote(s))
}

// varPart parses the inside of %{...}.
func varPart(name string) (part, error) {
	if k, v, ok := strings.Cut(name, ":"); ok {
		switch strings.ToUpper(k) {
		case "ENV":
			return part{kind: partEnv, lit: v}, nil
		case "HTTP":
			return part{kind: partHeader, lit: v}, nil
		case "SSL", "LA-U", "LA-F":
			return part{kind: partLit}, nil // no SSL variables, no look-aheads: empty
		}
		return part{}, templateError("unknown variable %{" + name + "}")
	}
	up := strings.ToUpper(name)
	if v, ok := varNames[up]; ok {
		return part{kind: partVar, n: v}, nil
	}
	if h, ok := strings.CutPrefix(up, "HTTP_"); ok {
		// Any other HTTP_X_Y reads the header X-Y (lenient: Apache
		// knows a fixed list and expands others empty).
		return part{kind: partHeader, lit: strings.ReplaceAll(h, "_", "-")}, nil
	}
	return part{kind: partLit}, nil // unknown: empty, as Apache expands it
}

// The variables a template may name.
const (
	varRequestURI = iota
	varQueryString
	varRequestFilename
	varRequestMethod
	varHTTPS
	varServerPort
	varRemoteAddr
	varTheRequest
	varDocumentRoot
	varHost
	varServerName
	varRequestScheme
	varServerProtocol
	varPathInfo
	varRemoteUser
	varAuthType
	varServerAddr
	varRemotePort
	varTimeYear
	varTime
	varTimeMon
	varTimeDay
	varTimeHour
	varTimeMin
	varTimeSec
	varTimeWday
	varServerSoftware
	varScriptName
)

var varNames = map[string]int{
	"REQUEST_URI":      varRequestURI,
	"QUERY_STRING":     varQueryString,
	"REQUEST_FILENAME": varRequestFilename,
	"SCRIPT_FILENAME":  varRequestFilename,
	"REQUEST_METHOD":   varRequestMethod,
	"HTTPS":            varHTTPS,
	"SERVER_PORT":      varServerPort,
	"REMOTE_ADDR":      varRemoteAddr,
	"REMOTE_HOST":      varRemoteAddr,
	"THE_REQUEST":      varTheRequest,
	"DOCUMENT_ROOT":    varDocumentRoot,
	"HTTP_HOST":        varHost,
	"SERVER_NAME":      varServerName,
	"REQUEST_SCHEME":   varRequestScheme,
	"SERVER_PROTOCOL":  varServerProtocol,
	"PATH_INFO":        varPathInfo,
	"REMOTE_USER":      varRemoteUser,
	"AUTH_TYPE":        varAuthType,
	"SERVER_ADDR":      varServerAddr,
	"REMOTE_PORT":      varRemotePort,
	"TIME_YEAR":        varTimeYear,
	"TIME":             varTime,
	"TIME_MON":         varTimeMon,
	"TIME_DAY":         varTimeDay,
	"TIME_HOUR":        varTimeHour,
	"TIME_MIN":         varTimeMin,
	"TIME_SEC":         varTimeSec,
	"TIME_WDAY":        varTimeWday,
	"SERVER_SOFTWARE":  varServerSoftware,
	"SCRIPT_NAME":      varScriptName,
}

// literal reports the template's text when it expands to a constant.
func (t *template) literal() (string, bool) {
	switch len(t.parts) {
	case 0:
		return "", true
	case 1:
		if t.parts[0].kind == partLit {
			return t.parts[0].lit, true
		}
	}
	return "", false
}
