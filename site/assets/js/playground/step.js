// Placeholder: filled in when its Go package is wired into the wasm module.
import { h } from './ui.js';

export function stepWidget() {
  return {
    controls: [h('p', {}, 'This page is not interactive yet; the results below are the static view.')],
    outputs: h('div', {}),
    request: () => ({ error: { field: '', message: '' } }),
    render() {},
    fieldFor: () => null,
    clearErrors() {},
    state: () => ({}),
  };
}
