package sweep

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
)

// Merge joins result files (a sharded run's, or runs resumed in pieces)
// into one, in point order, and returns the points none of them has. A
// point given twice must have the same row each time; a row of no point
// of the sweep, or a file with other columns, is an error naming the file
// and line.
func (f *File) Merge(inputs []string, out io.Writer) (missing []Point, err error) {
	header := f.Header()
	byKey := map[string]*Point{}
	for i := range f.Points {
		byKey[rowKey(f.Points[i].Values)] = &f.Points[i]
	}
	type found struct {
		cells []string
		where string
	}
	got := map[int]found{}
	for _, name := range inputs {
		file, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		rows, _, dropped, err := readRows(file, name, header)
		file.Close()
		if err != nil {
			return nil, err
		}
		if dropped != "" {
			return nil, fmt.Errorf("%s: the last line has no end (a run stopped while writing it): run the shard again to resume it", name)
		}
		for _, r := range rows {
			where := name + ":" + strconv.Itoa(r.line)
			p := byKey[rowKey(r.cells[1:1+len(f.Params)])]
			if p == nil {
				return nil, fmt.Errorf("%s: the row is of no point of %s", where, f.Name)
			}
			r.cells[0] = strconv.Itoa(p.Index)
			if prev, ok := got[p.Index]; ok {
				if !equal(prev.cells, r.cells) {
					return nil, fmt.Errorf("%s: point %d (%s) differs from its row at %s", where, p.Index, p.Label(f.Params), prev.where)
				}
				continue
			}
			got[p.Index] = found{r.cells, where}
		}
	}
	idx := make([]int, 0, len(got))
	for i := range got {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	if _, err := out.Write(csvLine(header)); err != nil {
		return nil, err
	}
	for _, i := range idx {
		if _, err := out.Write(csvLine(got[i].cells)); err != nil {
			return nil, err
		}
	}
	for _, p := range f.Points {
		if _, ok := got[p.Index]; !ok {
			missing = append(missing, p)
		}
	}
	return missing, nil
}
