"""Resources shared by pages (Streamlit-only)."""

from core.settings import Settings


def settings() -> Settings:
    """Read on every rerun (cheap), so a changed `.env` or environment takes effect."""
    return Settings()
