package proxy

// The request path is one ordered list of stages that every entry runs:
// HTTP/1.1 and HTTP/2 requests (ServeFastHTTP), HTTP/2 inline hits
// (ServeHit) and the fragments an ESI page includes (fragment.go). A stage
// added to the list applies to all of them.
//
//	admit    route to the site, body limit, HTTPS redirect      admit.go
//	         (rewrite: the site's .htaccess and LSCache rules go here)
//	purge    PURGE / REFRESH from trusted clients               purge.go
//	identity pass uncached (method, bypass), private identity   identity.go
//	key      scheme, host, normalised path and query            key.go
//	lookup   private then shared copy: fresh → answered         lookup.go
//	         (guard: the WAF goes here; a fresh hit never reaches it)
//	fill     forward a pass, or coalesce, re-check, fetch,      fill.go
//	         apply response purges, decide, store               store.go
//	respond  write the answer (page) or hand the body over      respond.go
//	         (fragment); runs for every answered request
//	         (log: the access log goes here)

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
	always bool
}

// pipeline is the stage list of every Proxy, in order.
func pipeline() []stage {
	return []stage{
		{name: "admit", run: stageAdmit},
		{name: "purge", run: stagePurge},
		{name: "identity", run: stageIdentity},
		{name: "key", run: stageKey},
		{name: "lookup", run: stageLookup},
		{name: "fill", run: stageFill},
		{name: "respond", run: stageRespond, always: true},
	}
}

// run takes r through the stages. It reports false when an inline
// request was declined (nothing answered, nothing changed).
func (p *Proxy) run(r *request) bool {
	stages := p.stages
	i := 0
	for ; i < len(stages); i++ {
		v := stages[i].run(r)
		if v == declined {
			return false
		}
		if v == answered {
			i++
			break
		}
	}
	for ; i < len(stages); i++ {
		if stages[i].always {
			stages[i].run(r)
		}
	}
	return true
}
