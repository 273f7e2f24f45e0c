//go:build js && wasm

// Command estimator is the WebAssembly module of the estimator page: package
// service's PageEstimator question and the built-in systems, registered as
// globalThis.distnav by package jsapi. Each page has its own binary, which
// links only what its question reaches.
package main

import (
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/wasm/jsapi"
)

func main() { jsapi.Serve(service.PageEstimator, (*service.Service).AnswerEstimator) }
