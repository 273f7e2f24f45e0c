// MAX_QUERY is how much of a link's query a page reads, in characters (the
// env table's filter in site.js, the playground's inputs in
// playground/state.js): a page's inputs, every variable the model takes
// included, fit in a few KB, and parsing a hostile 257 KB query of 11,000
// parameters (and naming them) cost 50-180 ms of the page's first task; a
// 1 MB link's query alone held the page for about 200 ms. A choice of the
// site, not a model limit.
export const MAX_QUERY = 32 * 1024;
