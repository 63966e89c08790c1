package alerting

import "errors"

// The package's errors; match them with errors.Is.
var (
	// ErrQueueFull: Send dropped a delivery because the queue was full.
	ErrQueueFull = errors.New("alerting: queue full")
	// ErrClosed: Send after Close.
	ErrClosed = errors.New("alerting: alerter closed")
	// ErrInvalidWebhook: a webhook's URL or format is not usable.
	ErrInvalidWebhook = errors.New("alerting: invalid webhook")
	// ErrDelivery: a webhook refused a delivery or could not be reached.
	ErrDelivery = errors.New("alerting: delivery failed")
	// ErrSignature: Verify found the signature missing, malformed or wrong.
	ErrSignature = errors.New("alerting: bad signature")
)
