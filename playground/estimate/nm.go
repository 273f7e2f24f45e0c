package estimate

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// minimize runs the Nelder–Mead simplex method on f from x0 with initial
// steps step, until the spread of the simplex values falls below tol or
// maxIter iterations; it restarts once from the best point so that a
// collapsed simplex does not stop it early. It is deterministic.
func minimize(ctx context.Context, f func([]float64) float64, x0 []float64, step float64, tol float64, maxIter int) ([]float64, float64, error) {
	best, fb := append([]float64(nil), x0...), f(x0)
	for round := 0; round < 2; round++ {
		x, fx, err := nelderMead(ctx, f, best, step, tol, maxIter)
		if err != nil {
			return nil, 0, err
		}
		if fx <= fb {
			best, fb = x, fx
		}
	}
	return best, fb, nil
}

func nelderMead(ctx context.Context, f func([]float64) float64, x0 []float64, step, tol float64, maxIter int) ([]float64, float64, error) {
	n := len(x0)
	if n == 0 {
		return x0, f(x0), nil
	}
	type vertex struct {
		x  []float64
		fx float64
	}
	simplex := make([]vertex, n+1)
	simplex[0] = vertex{append([]float64(nil), x0...), f(x0)}
	for i := 0; i < n; i++ {
		x := append([]float64(nil), x0...)
		x[i] += step
		simplex[i+1] = vertex{x, f(x)}
	}
	at := func(c []float64, toward []float64, k float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = c[i] + k*(toward[i]-c[i])
		}
		return out
	}
	for iter := 0; iter < maxIter; iter++ {
		if iter%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, fmt.Errorf("fit: %w", err)
			}
		}
		sort.SliceStable(simplex, func(i, j int) bool { return simplex[i].fx < simplex[j].fx })
		if math.Abs(simplex[n].fx-simplex[0].fx) <= tol*(math.Abs(simplex[0].fx)+tol) {
			break
		}
		centroid := make([]float64, n)
		for _, v := range simplex[:n] {
			for i := range centroid {
				centroid[i] += v.x[i] / float64(n)
			}
		}
		worst := simplex[n]
		xr := at(centroid, worst.x, -1)
		fr := f(xr)
		switch {
		case fr < simplex[0].fx:
			xe := at(centroid, worst.x, -2)
			if fe := f(xe); fe < fr {
				simplex[n] = vertex{xe, fe}
			} else {
				simplex[n] = vertex{xr, fr}
			}
		case fr < simplex[n-1].fx:
			simplex[n] = vertex{xr, fr}
		default:
			var xc []float64
			if fr < worst.fx {
				xc = at(centroid, xr, 0.5)
			} else {
				xc = at(centroid, worst.x, 0.5)
			}
			if fc := f(xc); fc < math.Min(fr, worst.fx) {
				simplex[n] = vertex{xc, fc}
				continue
			}
			for i := 1; i <= n; i++ {
				x := at(simplex[0].x, simplex[i].x, 0.5)
				simplex[i] = vertex{x, f(x)}
			}
		}
	}
	sort.SliceStable(simplex, func(i, j int) bool { return simplex[i].fx < simplex[j].fx })
	return simplex[0].x, simplex[0].fx, nil
}
