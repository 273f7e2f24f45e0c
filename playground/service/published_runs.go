package service

// publishedRun is one published run of data/measurements as the estimator
// page lists it, with what the page matches it on: the preset it was
// measured on, the node count and the collective (tune.Func's String).
type publishedRun struct {
	preset string
	nodes  int
	coll   string
	m      Measurement
}

// publishedRuns (published_runs_data.go) is generated from the datasets
// of package estimate by TestPublishedRunsData (`go generate
// ./playground/service` after data/measurements changes): a table of
// constants the compiler lays out as data, where the datasets themselves
// are built by code (about 40 KB gzip of the estimator page's wasm). Never
// modified.
//
//go:generate go test -run ^TestPublishedRunsData$ -update-generated
