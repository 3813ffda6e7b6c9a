"""The pure heart of toolnames: bodies in, provider-neutral views, findings and fixes out.

Nothing in this package imports mitmproxy except the modules named ``mitm_*``,
so the checks run the same in the live addon, the scanner and the content view.
"""
