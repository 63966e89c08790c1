package completions

// providerCost mirrors providers.Cost until the price catalogue lands.
type providerCost struct {
	InputUSD, OutputUSD, TotalUSD float64
	Known                         bool
}
