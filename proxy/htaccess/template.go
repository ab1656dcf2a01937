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
	// unknown names the first variable ramjet cannot expand ("%{X}"),
	// "" for none: its rule fails closed (rule.unknown).
	unknown string
}

type partKind uint8

const (
	partLit partKind = iota
	partRuleRef
	partCondRef
	partVar
	partEnv
	partHeader
	partUnknown // a variable ramjet cannot expand: never expanded to ""
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
			if p.kind == partUnknown && t.unknown == "" {
				t.unknown = p.lit
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

// varPart parses the inside of %{...}. A name ramjet cannot expand is
// a partUnknown, not an empty string: Apache expands an unknown name to
// "", so RewriteCond %{ORG_REQ_URI} !/admin would match every request
// and the exclusion it was written for would be silently lost.
func varPart(name string) (part, error) {
	if k, v, ok := strings.Cut(name, ":"); ok {
		switch strings.ToUpper(k) {
		case "ENV":
			return part{kind: partEnv, lit: v}, nil
		case "HTTP":
			return part{kind: partHeader, lit: v}, nil
		case "SSL", "LA-U", "LA-F":
			// No SSL variables, no look-aheads: what they would say is
			// not known here.
			return part{kind: partUnknown, lit: "%{" + name + "}"}, nil
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
	return part{kind: partUnknown, lit: "%{" + name + "}"}, nil
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
	varOrgReqURI
	varOrgQueryString
	varCurrentURI
	varRequestBasename
	varScriptURI
	varIsSubreq
	varEmpty
	varConnRemoteAddr
	varContextDocRoot
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
	// Apache's others that ramjet can answer.
	"IS_SUBREQ":             varIsSubreq,
	"REMOTE_IDENT":          varEmpty, // no identd lookups (IdentityCheck off)
	"CONTEXT_PREFIX":        varEmpty, // no Alias: the document root's context
	"CONTEXT_DOCUMENT_ROOT": varContextDocRoot,
	"CONN_REMOTE_ADDR":      varConnRemoteAddr,
	// LiteSpeed's (its rewrite engine's RequestVars).
	"ORG_REQ_URI":      varOrgReqURI,
	"ORG_QUERY_STRING": varOrgQueryString,
	"CURRENT_URI":      varCurrentURI,
	"REQUEST_BASENAME": varRequestBasename,
	"SCRIPT_BASENAME":  varRequestBasename,
	"SCRIPT_URI":       varScriptURI,
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
