"""The transport of every network listener of a job (pserver mode's RPC, the rendezvous stores of both modes).

  codec.py   a closed set of plain types and tensors to and from bytes; the decoder cannot build anything else
  frame.py   frames on a socket: header, meta, tensor buffers (scatter-gather out, preallocated in)
  auth.py    the mutual HMAC challenge-response every connection passes before its first frame
  server.py  a listener on exactly the configured address: handshakes, then handlers by name
  client.py  a connection to one endpoint: calls as torch futures, deadlines, loss reported at once
  store.py   a small key-value store served through handlers, and a torch.distributed.Store client of it
"""
