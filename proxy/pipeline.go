package proxy

// The request path is one ordered list of stages that every entry runs:
// HTTP/1.1, HTTP/2 and HTTP/3 requests (ServeFastHTTP), HTTP/2 and HTTP/1.1 inline hits
// (ServeHit) and the fragments an ESI page includes (fragment.go). A stage
// added to the list applies to all of them. What kind of request it is
// (kind) decides, once when the list is compiled, which stages it runs
// and how: the stages do not ask.
//
//	                                                          page inline fragment
//	client   who asks: peer, PROXY header, trusted proxies'    x    x     -      client.go
//	admit    one Host, origin-form target (400 if none), the   x    x¹    route  admit.go
//	         Connection list; route to the site, body limit,
//	         HTTPS redirect
//	rewrite  the site's .htaccess / LiteSpeed cache rules:      x    x¹    x²     rewrite.go
//	         refusals to the docroot, bypass, variant, key
//	purge    PURGE / REFRESH from trusted clients               x    -     -      purge.go
//	identity pass uncached (method, bypass), private identity  x    x¹    x³     identity.go
//	key      scheme, host, normalised path and query            x    x     x      key.go
//	lookup   private then shared copy: fresh → answered         x    x⁴    x      lookup.go
//	  ↓ the one hand-off: the stale copy, fwd reason, coalescing (lookup.go toFill)
//	guard    the WAF on what may reach the upstream; a fresh     x    -     x      guard.go
//	         hit never gets here (a stale one is inspected in
//	         lookup, before its refresh goes upstream)
//	crawler  the crawler's budget (what it may send upstream)   x    -     -      crawler.go
//	fill     forward a pass, or coalesce, re-check, fetch,      x    -     x      fill.go
//	         apply response purges, decide, store                                store.go
//	respond  write the answer (page) or hand the body over      x    x     x⁵     respond.go
//	         (fragment); runs for every answered request
//	stats    the site's counters; an uncached URL with its      x    x     -      sitestats.go
//	         reason; runs for every answered one
//	log      the access log line of a client request, handed    x    x     -      log.go
//	         to its file's writer; runs for every answered one
//
//	¹ declines what the page's stage would not let through or would pass
//	² its page's header fields; a refused fragment fails
//	³ its page decided the cache is used: only its credentials are noted
//	⁴ a fresh copy that is no ESI page answers; anything else is declined
//	⁵ stageHandOver: the body goes to the page assembling it
//
// A warm fetch (kindWarm, warmfetch.go) runs admit (route), rewrite (a
// refusal ends it unfetched), identity and key; warmFill ends it.

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

// kind is what a request is. It decides which stages the request runs
// and, where a stage does its part differently for it, which function:
// the pipeline is compiled once per kind, so that no stage asks.
type kind uint8

const (
	// kindPage is a client's request (HTTP/1.1, HTTP/2, HTTP/3).
	kindPage kind = iota
	// kindInline is an HTTP/2 request its connection's goroutine answers
	// only when that needs neither blocking nor a change of state (a
	// fresh hit), or an HTTP/1.1 one its connection's goroutine answers
	// outside fasthttp's loop (package h1) on the same terms: it stops
	// after lookup, and what is not answered by then is declined,
	// unchanged.
	kindInline
	// kindFragment is an ESI include of a page being assembled: a GET of
	// ramjet's own making, for its page's client, answered to the page.
	kindFragment
	// kindWarm is a warm fetch (warmfetch.go): a GET ramjet makes up to
	// fetch a page again, for no client. It stops after key; its own
	// fill ends it (warmFill).
	kindWarm
	numKinds
)

// kinds is a set of kinds.
type kinds uint8

func kindsOf(ks ...kind) kinds {
	var s kinds
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

func (s kinds) has(k kind) bool { return s&(1<<k) != 0 }

// stage is one step of the request path.
type stage struct {
	name string
	run  func(r *request) verdict
	// as is the stage as a kind runs it where that differs from run.
	as byKind
	// skip: the kinds that do not run the stage.
	skip kinds
	// always: runs once the request is answered, too (respond, log).
	// These come last in the list.
	always bool
}

// pipeline is the stage list of every Proxy, in order.
func pipeline() []stage {
	return []stage{
		{name: "client", run: stageClient, skip: kindsOf(kindFragment, kindWarm)}, // its page's client; ramjet
		{name: "admit", run: stageAdmit, as: byKind{kindInline: stageAdmitInline, kindFragment: stageRoute, kindWarm: stageRoute}},
		{name: "rewrite", run: stageRewrite, as: byKind{kindInline: stageRewriteInline, kindFragment: stageRewriteFragment, kindWarm: stageRewriteWarm}},
		{name: "purge", run: stagePurge, skip: kindsOf(kindInline, kindFragment, kindWarm)}, // inline: admit declined the method
		{name: "identity", run: stageIdentity, as: byKind{kindInline: stageIdentityInline, kindFragment: stageIdentityFragment}},
		{name: "key", run: stageKey},
		{name: "lookup", run: stageLookup, as: byKind{kindInline: stageLookupInline}, skip: kindsOf(kindWarm)},
		{name: "guard", run: stageGuard, skip: kindsOf(kindInline, kindWarm)},
		{name: "crawler", run: stageCrawler, skip: kindsOf(kindInline, kindFragment, kindWarm)}, // a fragment's page was admitted
		{name: "fill", run: stageFill, skip: kindsOf(kindInline, kindWarm)},
		{name: "respond", run: stageRespond, as: byKind{kindFragment: stageHandOver}, skip: kindsOf(kindWarm), always: true},
		{name: "stats", run: stageStats, skip: kindsOf(kindFragment, kindWarm), always: true}, // a fragment is part of its page's request
		{name: "log", run: stageLog, skip: kindsOf(kindFragment, kindWarm), always: true},     // a fragment is part of its page's line
	}
}

// byKind is a stage's function for the kinds that run it differently.
type byKind map[kind]func(r *request) verdict

// steps is a stage list ready to run, for every kind: the functions of
// the stages that run until one answers, then of those that run for
// every answer.
type steps struct {
	stages []stage
	of     [numKinds]kindSteps
}

type kindSteps struct {
	names         []string // of the stages, in order
	until, always []func(*request) verdict
	// hitOnly: what the stages did not answer is declined (kindInline).
	hitOnly bool
}

// newSteps compiles a stage list for every kind. The stages that always
// run must come last: a list that breaks this is a programmer's error.
func newSteps(stages []stage) steps {
	for i := 1; i < len(stages); i++ {
		if stages[i-1].always && !stages[i].always {
			panic("proxy: stage " + stages[i].name + " after a stage that always runs")
		}
	}
	st := steps{stages: stages}
	st.of[kindInline].hitOnly = true
	for k := range numKinds {
		ks := &st.of[k]
		for _, s := range stages {
			run := s.run
			if f := s.as[k]; f != nil {
				run = f
			}
			if !s.skip.has(k) {
				ks.names = append(ks.names, s.name)
			}
			switch {
			case s.skip.has(k):
			case s.always:
				ks.always = append(ks.always, run)
			default:
				ks.until = append(ks.until, run)
			}
		}
	}
	return st
}

// run takes r through the stages of its kind. It reports false when an
// inline request was declined (nothing answered, nothing changed).
func (p *Proxy) run(r *request) bool {
	st := &p.steps.of[r.kind]
	done := false
	for _, run := range st.until {
		v := run(r)
		if v == declined {
			return false
		}
		if v == answered {
			done = true
			break
		}
	}
	if !done && st.hitOnly {
		return false
	}
	for _, run := range st.always {
		run(r)
	}
	return true
}
