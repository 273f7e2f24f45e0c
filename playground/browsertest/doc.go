// Package browsertest drives the playground pages of the real site in
// Debian's Chromium: it builds the site (generator, wasm, Hugo) once,
// serves it under a GitHub Pages-like sub-path, and checks that the
// numbers each page shows equal what package service answers natively for
// the page's ncclsim line (service.ParseCommand; the wasm calls the same
// functions, so this is parity by construction, checked end to end),
// that bad input is reported next to its control and does not break the
// page, that updates are fast, that axe-core finds no WCAG 2 A/AA
// violation, and that nothing is logged to the console. Screenshots of each
// page in light and dark go to <repo>/screenshots/.
package browsertest
