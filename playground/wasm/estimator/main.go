//go:build js && wasm

// Command estimator is the WebAssembly module of the estimator page of the playground:
// package service's PageEstimator question (and the built-in systems) registered as
// globalThis.distnav by package jsapi. One binary per page, so that each
// page downloads only the code its question reaches.
package main

import (
	"syscall/js"

	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/wasm/jsapi"
)

func main() {
	s := service.New()
	jsapi.RegisterModel(js.Global(), s, map[string]jsapi.Question{service.PageEstimator: s.AnswerEstimator})
	select {}
}
