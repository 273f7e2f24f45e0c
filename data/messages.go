//go:build !nocatalog

package data

import "embed"

// Messages holds NCCL's message catalog, messages/*.tsv, generated from the
// NCCL source by playground/ncclmsg/internal/catalog-gen: every log call of
// the pinned release with its file:line, the older releases' wordings, the
// ncclResult_t texts and the IB work-completion names.
//
// A program built with the tag nocatalog leaves it out: the doctor page's
// wasm fetches the same files from the site (playground/wasm/build.sh
// copies them there), which keeps about 50 KB gzip out of the binary.
//
//go:embed messages/nccl-v2.30.7-1.tsv messages/nccl-older.tsv messages/nccl-results.tsv messages/ibv-wc.tsv messages/path-types.tsv
var Messages embed.FS
