//go:build !nopaste

// The estimator page's paste box: the user's nccl-tests output compared
// with the estimate. The estimator page's first binary is built with the
// tag nopaste, which leaves this file (the nccl-tests reader and the
// comparison) out; the page loads the full binary when a run is pasted.

package service

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/compare"
	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// comparePasted compares req.NCCLTests with the model of req: on p it sets
// Compare and CompareCommand, or CompareError; it returns the run when it
// is of the page's collective f (to draw over the curves) and the figure
// "compare", its table per size.
func (s *Service) comparePasted(ctx context.Context, req *Request, f tune.Func, p *EstimatorPage) (*compare.Result, *Figure) {
	if len(req.NCCLTests) > MaxNCCLTestsBytes {
		p.CompareError = &FieldError{Field: "nccl_tests", Message: "the pasted text is " + strconv.Itoa(len(req.NCCLTests)) + " bytes; the limit is " + strconv.Itoa(MaxNCCLTestsBytes)}
		return nil, nil
	}
	c, err := s.Compare(ctx, req, CompareRequest{NCCLTests: NCCLTestsInput{Text: strings.NewReader(req.NCCLTests), Name: "pasted output"}})
	if err != nil {
		var fe *FieldError
		if !errors.As(err, &fe) {
			fe = &FieldError{Field: "nccl_tests", Message: err.Error()}
		}
		p.CompareError = fe
		return nil, nil
	}
	p.Compare, p.CompareCommand = c, commandLine("compare", req, nil)
	var yours *compare.Result
	if strings.EqualFold(c.Coll, f.String()) {
		p.CompareDrawn, yours = true, c.Result
	}
	return yours, &Figure{"compare", compareTable(c.Result)}
}

// compareTable lists the user's run per size next to the model, the
// calibrated estimate and its band.
func compareTable(c *compare.Result) string {
	num := func(v float64) figure.Cell { return figure.Cell{Text: figure.Fixed(v, 2), Value: jsonNumber(v, 64)} }
	pct := func(v *float64) figure.Cell {
		if v == nil {
			return figure.Cell{Text: "–"}
		}
		return figure.Cell{Text: figure.Fixed(*v, 1), Value: jsonNumber(*v, 64)}
	}
	var rows []figure.Row
	shown := shownRows(len(c.Rows))
	for _, i := range shown {
		r := c.Rows[i]
		band := figure.Fixed(r.BandLow, 2) + "–"
		if r.BandHigh != nil {
			band += figure.Fixed(*r.BandHigh, 2)
		} else {
			band += "∞"
		}
		if r.InBand {
			band += " ✓"
		}
		rows = append(rows, figure.Row{Attr: "compare", Cells: []figure.Cell{
			{Text: figure.Bytes(float64(r.Bytes)), Value: strconv.FormatUint(r.Bytes, 10)},
			num(r.MeasuredBusBw), num(r.ModelBusBw), num(r.CalibratedBusBw), {Text: band}, pct(r.ErrorPct), pct(r.ModelErrorPct),
		}})
	}
	caption := "Your " + c.Coll + " run on " + strconv.Itoa(c.NRanks) + " ranks: measured busbw (out-of-place) next to NCCL's model and the calibrated estimate with its band; error = (predicted − measured) / measured"
	if more := len(c.Rows) - len(shown); more > 0 {
		caption += "; " + strconv.Itoa(len(shown)) + " of the " + strconv.Itoa(len(c.Rows)) + " rows, evenly spaced from the first to the last, and " + strconv.Itoa(more) + " more rows (ncclsim compare lists them all)"
	}
	return figure.Table(figure.TableSpec{
		Caption: caption,
		Head:    []string{"size", "measured busbw (GB/s)", "NCCL model (GB/s)", "calibrated (GB/s)", "band (GB/s)", "error (%)", "model error (%)"},
		Class:   "pg-compare",
		Rows:    rows,
	})
}
