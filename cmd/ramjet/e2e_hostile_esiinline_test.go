package main_test

// End-to-end tests of <esi:inline> bodies (issue 37): they belong to the
// page that carries them, so a page that reflects a query parameter
// cannot store a body as another URL of the site.

import (
	"strings"
	"testing"
)

// inline is an <esi:inline> named name with body and a year's lifetime.
func inline(name, body string) string {
	return `<esi:inline name="` + name + `" cache-control="public,max-age=31536000">` + body + `</esi:inline>`
}

// TestESIInlineInAReflectedParameterReplacesNoPage: page.php writes its
// m1, m2 parameters into an ESI page, as a search page writes its query.
// Inlines named after a fresh page and a page never fetched change
// neither: the fresh one is still the cached origin page, the other comes
// from the origin, and another page's include of the fresh one gets it.
func TestESIInlineInAReflectedParameterReplacesNoPage(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	victim, absent := "/esi/pub.php?name=victim", "/esi/pub.php?name=absent"
	first := get(t, c, rj.URL+victim)
	mustMissStored(t, first, "victim before the attack")
	stored := mustFrag(t, first, "victim", "victim before the attack")

	attack := get(t, c, rj.URL+esiPage("", []string{inline(victim, "EVIL-1"), inline(absent, "EVIL-2")}))
	mustIntactPage(t, attack, 2, "attacking page")
	mustNoMarkup(t, attack, "attacking page")

	r := get(t, c, rj.URL+victim)
	mustFreshHit(t, r, "victim after the attack")
	if f := mustFrag(t, r, "victim", "victim after the attack"); f.ID != stored.ID || strings.Contains(string(r.Body), "EVIL") {
		t.Fatalf("victim after the attack: %q, want the cached block %s", r.Body, stored.ID)
	}
	r = get(t, c, rj.URL+absent)
	mustMissStored(t, r, "page never fetched before the attack")
	mustFrag(t, r, "absent", "page never fetched before the attack")
	if n := o.waitRequests(t, "/esi/pub.php", 2); n != 2 {
		t.Errorf("origin saw %d fragment requests, want 2 (victim before the attack, absent after it)", n)
	}

	p := get(t, c, rj.URL+esiPage("", []string{incl(victim)}))
	if f := mustFrag(t, p, "victim", "another page including the victim"); f.ID != stored.ID {
		t.Fatalf("another page's include of the victim: block %s, want the cached %s", f.ID, stored.ID)
	}
}

// TestESIInlineAnswersItsOwnPagesInclude: the LiteSpeed Cache plugin's
// form, an inline followed by an include of its name, needs no fetch of
// the name on the page's fill nor on its hits; another page's include of
// the name is fetched from the origin.
func TestESIInlineAnswersItsOwnPagesInclude(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	const name = "/esi/pub.php?name=own"
	markup := `<esi:inline name='` + name + `' cache-control='public,max-age=60' cache-tag='own'>[own-inline]</esi:inline>` +
		`<esi:include src='` + name + `' />`
	u := rj.URL + esiPage("", []string{markup})
	for i, what := range []string{"page fill", "page hit"} {
		r := get(t, c, u)
		mustIntactPage(t, r, 1, what)
		mustNoMarkup(t, r, what)
		if i > 0 {
			mustFreshHit(t, r, what)
		}
		mustNoFrag(t, r, "own", what)
		if !strings.Contains(string(r.Body), "[own-inline]<p>after-m1</p>") {
			t.Fatalf("%s: include of the inline's name not answered by it: %.500q", what, r.Body)
		}
	}
	other := get(t, c, rj.URL+esiPage("", []string{incl(name)}))
	mustFrag(t, other, "own", "another page including the name")
	if n := o.waitRequests(t, "/esi/pub.php", 1); n != 1 {
		t.Errorf("origin saw %d requests for the name, want 1 (the other page's)", n)
	}
}
