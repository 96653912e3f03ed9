package worker

import (
	"context"

	"github.com/memdecay/memdecay/worker/internal/service"
)

// ServiceOptions configure memworker run's HTTP service (run --listen).
type ServiceOptions = service.Options

// Service serves reference 004's decay API, health, readiness and
// Prometheus metrics for one database (docs/running.md).
type Service = service.Server

// NewService is a service of opt.Path whose sweeps on request stop when
// ctx ends.
func NewService(ctx context.Context, opt ServiceOptions) *Service { return service.New(ctx, opt) }

// DecayRequest and DecayResponse are POST /memory/graph/decay's body and
// answer; ServiceEdge one edge of GET /memory/graph/edges; Health
// GET /healthz's answer.
type (
	DecayRequest  = service.DecayRequest
	DecayResponse = service.DecayResponse
	ServiceEdge   = service.Edge
	Health        = service.Health
)
