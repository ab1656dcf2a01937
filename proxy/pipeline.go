package proxy

// The request path is one ordered list of stages that every entry runs:
// HTTP/1.1 and HTTP/2 requests (ServeFastHTTP), HTTP/2 inline hits
// (ServeHit) and the fragments an ESI page includes (fragment.go). A stage
// added to the list applies to all of them.
//
//	client   who asks: peer, PROXY header, trusted proxies'     client.go
//	admit    one Host, origin-form target (400 if none), the   admit.go
//	         Connection list; route to the site, body limit,
//	         HTTPS redirect
//	rewrite  the site's .htaccess / LiteSpeed cache rules:      rewrite.go
//	         refusals to the docroot, bypass, variant, key
//	purge    PURGE / REFRESH from trusted clients               purge.go
//	identity pass uncached (method, bypass), private identity   identity.go
//	key      scheme, host, normalised path and query            key.go
//	lookup   private then shared copy: fresh → answered         lookup.go
//	guard    the WAF on what may reach the upstream; a fresh     guard.go
//	         hit never gets here (a stale one is inspected in
//	         lookup, before its refresh goes upstream)
//	fill     the crawler's budget (what it may send upstream),  crawler.go
//	         forward a pass, or coalesce, re-check, fetch,      fill.go
//	         apply response purges, decide, store               store.go
//	respond  write the answer (page) or hand the body over      respond.go
//	         (fragment); runs for every answered request
//	stats    the site's counters; an uncached URL with its      sitestats.go
//	         reason; runs for every answered one
//	log      the access log line of a client request, handed    log.go
//	         to its file's writer; runs for every answered one

// verdict is what a stage tells the pipeline.
type verdict uint8

const (
	// proceed runs the next stage.
	proceed verdict = iota
	// answered: the request has its answer (in r.res); only the stages
	// that run for every answer (respond) still run.
	answered
	// declined: an inline request cannot be answered without blocking or
	// changing state; nothing was changed, and the pipeline stops. Only
	// stages of an inline request decline.
	declined
)

// stage is one step of the request path.
type stage struct {
	name string
	run  func(r *request) verdict
	// always: runs once the request is answered, too (respond, log).
	// These come last in the list.
	always bool
}

// pipeline is the stage list of every Proxy, in order.
func pipeline() []stage {
	return []stage{
		{name: "client", run: stageClient},
		{name: "admit", run: stageAdmit},
		{name: "rewrite", run: stageRewrite},
		{name: "purge", run: stagePurge},
		{name: "identity", run: stageIdentity},
		{name: "key", run: stageKey},
		{name: "lookup", run: stageLookup},
		{name: "guard", run: stageGuard},
		{name: "fill", run: stageFill},
		{name: "respond", run: stageRespond, always: true},
		{name: "stats", run: stageStats, always: true},
		{name: "log", run: stageLog, always: true},
	}
}

// steps is a stage list ready to run: the functions of the stages that
// run until one answers, then of those that run for every answer.
type steps struct {
	stages        []stage
	until, always []func(*request) verdict
}

// newSteps compiles a stage list. The stages that always run must come
// last: a list that breaks this is a programmer's error.
func newSteps(stages []stage) steps {
	st := steps{stages: stages}
	for _, s := range stages {
		switch {
		case s.always:
			st.always = append(st.always, s.run)
		case len(st.always) > 0:
			panic("proxy: stage " + s.name + " after a stage that always runs")
		default:
			st.until = append(st.until, s.run)
		}
	}
	return st
}

// run takes r through the stages. It reports false when an inline
// request was declined (nothing answered, nothing changed).
func (p *Proxy) run(r *request) bool {
	for _, run := range p.steps.until {
		v := run(r)
		if v == answered {
			break
		}
		if v == declined {
			return false
		}
	}
	for _, run := range p.steps.always {
		run(r)
	}
	return true
}
