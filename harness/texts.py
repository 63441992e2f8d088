"""Words far apart for any embedder, from which tests and benchmarks build texts that are never
near-duplicates of each other (a suggestion never hands out two near-duplicates together)."""

from __future__ import annotations

WORDS = [
    "tea",
    "rain",
    "maps",
    "jazz",
    "river",
    "copper",
    "lantern",
    "violin",
    "harbour",
    "meadow",
    "pepper",
    "glacier",
    "orbit",
    "velvet",
    "canyon",
    "falcon",
    "marble",
    "thunder",
    "cactus",
    "ribbon",
    "saddle",
    "walnut",
    "comet",
    "bamboo",
    "anchor",
]
