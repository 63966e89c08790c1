package providers

import (
	"regexp"
	"strings"
)

// imageQualifier matches the segments of an image catalogue key that say which images an
// entry prices rather than which model: a quality ("hd", "low") or a size ("1024-x-1792").
var imageQualifier = regexp.MustCompile(`^(standard|hd|low|medium|high|\d+-x-\d+)$`)

// imageCanonicalKey returns the canonical form of an image catalogue key ("[provider/]
// [quality/][size/]model"): its quality and size as they are, then CanonicalModel of the
// model (no date or version suffix, dots as dashes); and the provider prefixes the key
// carries ("azure" of "azure/hd/1024-x-1024/dall-e-3", "openai" of "openai/gpt-image-1").
func imageCanonicalKey(key string) (canon string, vendors []string) {
	segs := strings.Split(strings.ToLower(strings.TrimSpace(key)), "/")
	model := CanonicalModel(segs[len(segs)-1])
	if model == "" {
		return "", nil
	}
	var quals []string
	for _, s := range segs[:len(segs)-1] {
		if imageQualifier.MatchString(s) {
			quals = append(quals, s)
		} else if s != "" {
			vendors = append(vendors, s)
		}
	}
	return strings.Join(append(quals, model), "/"), vendors
}

// imageIndex maps the canonical form of every key of images to the keys.
func imageIndex(images map[string]ImagePrice) map[string][]string {
	idx := make(map[string][]string, len(images))
	for k := range images {
		if canon, _ := imageCanonicalKey(k); canon != "" {
			idx[canon] = append(idx[canon], k)
		}
	}
	return idx
}

// lookupImageCanonical finds an image key (without the provider's prefix) that matches no
// catalogue key exactly by its canonical form, among the entries of provider's LiteLLM
// provider first, then of the vendors the key itself names ("openai" of
// "openai/gpt-image-1", which an OpenAI-compatible gateway's model id may carry); among
// several, the shortest key, then the first in lexical order (the undated name before a
// dated one). Unlike chat prices (Lookup), no other provider's entry is taken: image
// prices differ between providers of the same model (Azure's gpt-image-1 is not OpenAI's),
// and a name's near miss at another provider would be a guess.
func (c *Catalog) lookupImageCanonical(provider, key string) (ImagePrice, bool) {
	canon, vendors := imageCanonicalKey(key)
	if canon == "" {
		return ImagePrice{}, false
	}
	owners := []string{catalogProvider(provider)}
	for _, v := range vendors {
		owners = append(owners, catalogProvider(v))
	}
	for _, owner := range owners {
		var best ImagePrice
		found := false
		for _, k := range c.imageCanon[canon] {
			p := c.images[k]
			if !inProviderFamily(p.Provider, owner) {
				continue
			}
			if !found || len(k) < len(best.Key) || len(k) == len(best.Key) && k < best.Key {
				best, found = p, true
			}
		}
		if found {
			return best, true
		}
	}
	return ImagePrice{}, false
}
