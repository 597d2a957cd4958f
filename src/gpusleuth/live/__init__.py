"""Reading a live cluster: connection, collection plan, redaction, bundles and node probes.

Everything here may import lightkube (the ``live`` extra); nothing in the offline path imports this
package, so ``gpusleuth diagnose FOLDER`` never pays for the client library.
"""
