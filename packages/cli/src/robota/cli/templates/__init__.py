"""The product's profile templates: ``config.yaml`` and ``env``, what ``robota init`` writes.

They name the agents and chat platforms robota ships with, so they live here, in the package
that composes the product, and not in ``robota.core``, which names none: core finds them
through the ``robota.profile_templates`` entry point (``robota.core.config.template_text``).
"""

__all__: list[str] = []
