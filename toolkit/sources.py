"""The catalogue of listing sources: platform slugs, currencies, purchase links.

Slugs and currencies follow the live service's reference (`Domain.source` enum and
the currency list of its `llms` file). Everything that needs to know a source reads it
here: validation of `source=`, the demo source, the app's sidebar.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Source", "SOURCES", "PLATFORM_SLUGS", "REGFREE", "source_by_slug"]

REGFREE = "regfree"


@dataclass(frozen=True)
class Source:
    slug: str
    name: str
    currency: str | None
    purchase_url: str | None  # pattern with {name}; None when the source has no buy link
    free_tier: bool = False  # offered by the free endpoint (reference FreeDomain enum)


SOURCES: tuple[Source, ...] = (
    Source("dynadot", "Dynadot", "USD", "https://www.dynadot.com/market/closeout/{name}", True),
    Source("catched", "Catched", "USD", "https://catched.com/domain/{name}", True),
    Source("dropcatch", "DropCatch", "USD", "https://www.dropcatch.com/domain/{name}", True),
    Source(
        "godaddy", "GoDaddy Auctions", "USD", "https://auctions.godaddy.com/trpItemListing.aspx?domain={name}", True
    ),
    Source("gname", "Gname", "USD", "https://www.gname.com/domain/auction/{name}", True),
    Source("snapnames", "SnapNames", "USD", "https://www.snapnames.com/domain/{name}", True),
    Source("ukdroplists", "UK Droplists", "GBP", "https://www.ukdroplists.com/domain/{name}", True),
    Source("subreg", "Subreg", "EUR", "https://subreg.cz/en/auction/{name}", True),
    Source("webexpire", "WebExpire", "EUR", "https://www.webexpire.fr/domaine/{name}", True),
    Source("parkio", "Park.io", "USD", "https://park.io/domains/view/{name}", True),
    Source("bloomup", "BloomUp", "EUR", "https://www.bloomup.fr/domaine/{name}", True),
    Source("nicsell", "Nicsell", "EUR", "https://www.nicsell.com/en/domain/{name}"),
    Source("namesilo", "NameSilo", "USD", "https://www.namesilo.com/marketplace/auction/{name}"),
    Source("namecheap", "Namecheap", "USD", "https://www.namecheap.com/market/{name}"),
    Source("sedo", "Sedo", "EUR", "https://sedo.com/search/details/?domain={name}"),
    Source("gnews-domains", "Gnews Domains", "EUR", "https://gnews-domains.com/domain/{name}"),
    Source("backorders-domains", "Backorders Domains", "EUR", "https://backorders.domains/domain/{name}"),
    Source("domainlore", "DomainLore", "GBP", "https://www.domainlore.uk/auctions/{name}"),
    Source("rakkodomain", "Rakko", "JPY", "https://rakkodomain.com/domain/{name}"),
    Source("seodomains", "SEO.Domains", "USD", "https://seo.domains/domain/{name}", True),
    Source("nameshift", "NameShift", None, "https://nameshift.com/{name}"),
    Source("namepros", "NamePros", "USD", "https://www.namepros.com/marketplace/{name}"),
    Source(REGFREE, "Aged Domains (deleted ccTLD)", None, None),
)

PLATFORM_SLUGS: tuple[str, ...] = tuple(s.slug for s in SOURCES if s.slug != REGFREE)
_BY_SLUG = {s.slug: s for s in SOURCES}


def source_by_slug(slug: str) -> Source | None:
    return _BY_SLUG.get(slug)
