"""A whole campaign as one file: `glyphoxa campaign export C -o FILE.tar.gz` and
`glyphoxa campaign import FILE.tar.gz [--as C2]`.

`tables` says which rows a campaign is, `bundle` writes and reads the file (manifest,
checksums, bounds), `dump` reads a campaign's rows, `restore` writes them into a home in one
transaction.
"""
