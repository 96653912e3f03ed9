package sqlcalls

import (
	"slices"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

func TestCalls(t *testing.T) {
	names := []string{"linear_weight", "multi_linear_weight", "decay_tier", "memdecay_version"}
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`memdecay_version()`, []string{"memdecay_version/0"}},
		{`linear_weight(1, 0.1, 5)`, []string{"linear_weight/3"}},
		{`multi_linear_weight('[{"weight":1,"rate":0.1}]', max(1, 2))`, []string{"multi_linear_weight/2"}},
		{`linear_weight(1, 0.1, 5, 2) + linear_weight('a,b', 1, 2)`, []string{"linear_weight/4", "linear_weight/3"}},
		{`(SELECT decay_tier(json_group_array(t), 'fact') FROM x)`, []string{"decay_tier/2"}},
		{`exp(1)`, nil},
	} {
		if got := Calls(tc.expr, names); !slices.Equal(got, tc.want) {
			t.Errorf("Calls(%s) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestMissing(t *testing.T) {
	fns := shim.Functions()
	var lambdaEdge []shim.Function
	for _, f := range fns {
		if f.Name == "lambda_edge" {
			lambdaEdge = append(lambdaEdge, f)
		}
	}
	got := Missing([]string{`lambda_edge('standard', 'durable')`, `lambda_edge('a', 'b', 1, 2)`, `lambda_edge('a', 'b', 1, 2, '{}')`}, lambdaEdge)
	if want := []string{"lambda_edge/3"}; !slices.Equal(got, want) {
		t.Errorf("Missing = %q, want %q", got, want)
	}
	if got := Missing(nil, lambdaEdge, "lambda_edge"); len(got) != 0 {
		t.Errorf("Missing with lambda_edge skipped = %q, want none", got)
	}
}
