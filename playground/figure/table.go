package figure

// Cell is one table cell. Value, when set, is the full-precision number
// behind Text (written as data-v so that scripts and tests read the exact
// value); Class is added to the cell.
type Cell struct {
	Text  string
	Value string
	Class string
}

// Row is one table row; the first cell is the row header. Formula, when
// set, explains how the row's numbers were computed; it is shown in a
// <details> element in the last column, which works without JavaScript and
// from the keyboard.
type Row struct {
	Cells   []Cell
	Formula []string
	// Attr is an optional data-row attribute value identifying the row.
	Attr string
}

// TableSpec describes a table.
type TableSpec struct {
	Caption string
	Head    []string
	Rows    []Row
	Class   string
	// FormulaLabel is the <summary> text of the formula column ("" means
	// "formula").
	FormulaLabel string
}

// Table renders t as an HTML table with escaped content.
func Table(t TableSpec) string {
	var b builder
	b.s(`<table class="pg-table`)
	if t.Class != "" {
		b.s(" ", Escape(t.Class))
	}
	b.s(`">`)
	if t.Caption != "" {
		b.s(`<caption>`, Escape(t.Caption), `</caption>`)
	}
	hasFormula := false
	for _, r := range t.Rows {
		if len(r.Formula) > 0 {
			hasFormula = true
			break
		}
	}
	b.s(`<thead><tr>`)
	for _, h := range t.Head {
		b.s(`<th scope="col">`, Escape(h), `</th>`)
	}
	if hasFormula {
		b.s(`<th scope="col">how</th>`)
	}
	b.s(`</tr></thead><tbody>`)
	label := t.FormulaLabel
	if label == "" {
		label = "formula"
	}
	for _, r := range t.Rows {
		b.s(`<tr`)
		if r.Attr != "" {
			b.attr("data-row", r.Attr)
		}
		b.s(`>`)
		for i, c := range r.Cells {
			tag := "td"
			if i == 0 {
				tag = "th"
			}
			b.s("<", tag)
			if i == 0 {
				b.s(` scope="row"`)
			}
			if c.Class != "" {
				b.attr("class", c.Class)
			}
			if c.Value != "" {
				b.attr("data-v", c.Value)
			}
			b.s(">", Escape(c.Text), "</", tag, ">")
		}
		if hasFormula {
			b.s(`<td>`)
			if len(r.Formula) > 0 {
				b.s(`<details class="pg-formula"><summary>`, Escape(label))
				if len(r.Cells) > 0 {
					b.s(`<span class="visually-hidden"> for `, Escape(r.Cells[0].Text), `</span>`)
				}
				b.s(`</summary>`)
				for _, f := range r.Formula {
					b.s(`<p>`, Escape(f), `</p>`)
				}
				b.s(`</details>`)
			}
			b.s(`</td>`)
		}
		b.s(`</tr>`)
	}
	b.s(`</tbody></table>`)
	return b.String()
}
