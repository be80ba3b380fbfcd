"""Resources shared by pages (Streamlit-only)."""

from core.settings import Settings


def settings() -> Settings:
    """Read on every rerun (cheap), so a changed `.env` or environment takes effect."""
    return Settings()


def shown_time(value, *, seconds: bool = False) -> str:
    """A timestamp from a file (ISO-8601) as the user reads it: in ``WB_TIMEZONE``; 「不明」 when
    there is none. Every page shows times through this."""
    from core.timefmt import local_time

    return local_time(value, settings().timezone, seconds=seconds)
