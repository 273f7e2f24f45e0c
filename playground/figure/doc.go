// Package figure draws the playground's figures as SVG and HTML strings:
// the topology of a system with its searched channels, the GPU x GPU path
// matrix, log-log charts of time (or bandwidth) against message size, and
// the compute/communication timeline of a training step.
//
// The same functions serve the static pages the generator writes (the view
// without JavaScript) and the wasm playground, so both show identical
// figures. Output is deterministic: the same input gives the same bytes.
// Every name that can come from user input (a pasted topology XML) is
// escaped. Colours are CSS classes (see site/assets/css/playground.css),
// never inline colours, so light, dark and print themes all apply.
//
// The package's own code formats with strconv and strings (no fmt, no
// reflection) so that it adds little to the wasm binary.
package figure
