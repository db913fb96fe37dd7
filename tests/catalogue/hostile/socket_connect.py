import socket
socket.create_connection(("1.1.1.1", 80), timeout=2).close()
socket.create_connection(("127.0.0.1", 22), timeout=2).close()
