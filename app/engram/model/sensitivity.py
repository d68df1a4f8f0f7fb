"""The sensitive categories (P5): what learning never applies without a person's review.

The special categories of personal data of GDPR Art. 9, plus money and debts, credentials
and account numbers, precise location, and anything about a child. The ids are a contract
(agent configurations name them, candidates carry them); the words that reveal each one
are data, shipped in engram/data/sensitive/categories.json.
"""

from __future__ import annotations

from enum import StrEnum


class SensitiveCategory(StrEnum):
    """One sensitive category; its value is the id configurations and candidates use."""

    HEALTH = "health"
    SEX_LIFE = "sex_life"  # sex life and sexual orientation
    ORIGIN = "origin"  # racial or ethnic origin
    POLITICS = "politics"  # political opinions
    BELIEFS = "beliefs"  # religious or philosophical beliefs
    TRADE_UNION = "trade_union"
    GENETIC = "genetic"
    BIOMETRIC = "biometric"
    MONEY = "money"  # money and debts
    CREDENTIALS = "credentials"  # credentials and account numbers
    LOCATION = "location"  # precise location
    CHILD = "child"  # anything about a child


LABELS = {
    SensitiveCategory.HEALTH: "health",
    SensitiveCategory.SEX_LIFE: "sex life or sexual orientation",
    SensitiveCategory.ORIGIN: "racial or ethnic origin",
    SensitiveCategory.POLITICS: "political opinions",
    SensitiveCategory.BELIEFS: "religious or philosophical beliefs",
    SensitiveCategory.TRADE_UNION: "trade-union membership",
    SensitiveCategory.GENETIC: "genetic data",
    SensitiveCategory.BIOMETRIC: "biometric data",
    SensitiveCategory.MONEY: "money and debts",
    SensitiveCategory.CREDENTIALS: "credentials and account numbers",
    SensitiveCategory.LOCATION: "precise location",
    SensitiveCategory.CHILD: "a child",
}


def label(category: str | None) -> str:
    """Words for a category id (an id this release does not know is shown as it is)."""
    if category is None:
        return "a sensitive topic"
    try:
        return LABELS[SensitiveCategory(category)]
    except ValueError:
        return category


def parse_category(value: str | None) -> SensitiveCategory | None:
    """A category id an extractor gave, or None when it is not one of ours."""
    try:
        return SensitiveCategory(str(value).strip().lower()) if value else None
    except ValueError:
        return None
