package plural

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	assert.Equal(t, "0 faults", Count(0, "fault"))
	assert.Equal(t, "1 fault", Count(1, "fault"))
	assert.Equal(t, "2 faults", Count(int64(2), "fault"))
	assert.Equal(t, "1 go-back-N retry", Count(uint64(1), "go-back-N retry"))
	assert.Equal(t, "5 go-back-N retries", Count(uint64(5), "go-back-N retry"))
	assert.Equal(t, "80 switches", Count(80, "switch"))
	assert.Equal(t, "2 bushes", Count(2, "bush"))
	assert.Equal(t, "3 boxes", Count(3, "box"))
	assert.Equal(t, "1 switch", Count(1, "switch"))
	assert.Equal(t, "3 delays", Count(3, "delay"))
	assert.Equal(t, "2 WRs", Count(2, "WR"))
	assert.Equal(t, "-1 frames", Count(-1, "frame"))
	assert.Equal(t, "x: 1 IB frame", string(Append([]byte("x: "), uint32(1), "IB frame")))
}
