// Package termtext makes text that others control safe to write to a
// terminal: site and pool names and error bodies an admin listener sends
// to ramjet top, directory names and PHP output a tenant controls in
// ramjet wp's lines. A terminal obeys the control characters in what it
// is given (ESC starts sequences that set the window title, move the
// cursor, redraw the screen, or, on some terminals, answer with input),
// so each one is shown as a visible escape instead.
package termtext
