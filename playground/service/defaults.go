package service

// DefaultStep are the inputs the step page opens on (its static view and
// the live page).
var DefaultStep = StepInputs{Mode: "ddp", Params: "1.5B", ForwardMs: "60", BackwardMs: "120", OptimizerMs: "10"}

// The estimator page opens on an AllReduce of DefaultEstimatorBytes.
const (
	DefaultEstimatorColl  = "allreduce"
	DefaultEstimatorBytes = "64M"
)

// figureOf returns the markup of the named figure, or "".
func figureOf(figs []Figure, name string) string {
	for _, f := range figs {
		if f.Name == name {
			return f.Markup
		}
	}
	return ""
}
