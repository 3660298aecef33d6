import unittest

from checks import sockets as so


def c(call, ts, dur, ret, ino=1, peer="70"):
    return {"call": call, "ts": ts, "dur": dur, "ret": ret, "ino": ino, "peer_hex": peer}


class Sockets(unittest.TestCase):
    def test_recv_send(self):
        self.assertEqual(so.recv_send("recvmmsg"), "recv")
        self.assertEqual(so.recv_send("read"), "recv")
        self.assertEqual(so.recv_send("sendto"), "send")
        self.assertIsNone(so.recv_send("close"))

    def test_requests_client(self):
        # send, two receives; a send burst of two, a receive; a send never answered
        calls = [c("sendto", 0, 10, 5), c("recvfrom", 20, 100, 50), c("recvfrom", 130, 10, 7),
                 c("sendto", 200, 5, 1), c("sendto", 210, 5, 1), c("recvfrom", 220, 30, 9),
                 c("sendto", 300, 5, 1)]
        self.assertEqual(so.requests(calls), [(0, 140), (200, 250)])

    def test_requests_answer_must_move_bytes(self):
        # EOF (0 bytes) and an error do not answer; a first call that moved nothing
        # does not decide the socket's direction
        calls = [c("recvfrom", 0, 1, 0), c("sendto", 10, 1, 3), c("recvfrom", 20, 1, -11),
                 c("recvfrom", 30, 1, 0)]
        self.assertEqual(so.requests(calls), [])

    def test_requests_server(self):
        # the socket's first data call receives: a request, then its answer
        calls = [c("recvfrom", 0, 50, 20), c("sendto", 60, 5, 100), c("recvfrom", 100, 50, 20),
                 c("sendto", 160, 5, 100), c("close", 200, 1, 0)]
        self.assertEqual(so.requests(calls), [(0, 65), (100, 165)])

    def test_peer_totals(self):
        a, b = "61", "62"
        calls = [c("sendto", 0, 10, 5, 1, a), c("recvfrom", 20, 100, 50, 1, a),
                 c("sendto", 0, 10, 4, 2, a), c("recvmsg", 30, 7, 8, 2, a),
                 c("recvfrom", 5, 3, -11, 3, b), c("read", 9, 2, 4, 4, None)]
        t = so.peer_totals(calls)
        self.assertEqual(set(t), {"a", "b"})
        self.assertEqual((t["a"]["received"], t["a"]["sent"], t["a"]["requests"]), (58, 9, 2))
        self.assertEqual((t["a"]["recv_ns"], t["a"]["send_ns"]), (107, 20))
        self.assertEqual((t["b"]["recv_calls"], t["b"]["received"], t["b"]["requests"]), (1, 0, 0))

    def test_close_enough(self):
        self.assertTrue(so.close_enough(1_100_000_000 + 20_000_000, 1_000_000_000 + 100_000_000))
        self.assertTrue(so.close_enough(20_000_000, 0))
        self.assertFalse(so.close_enough(1_000_000_000, 800_000_000))


if __name__ == "__main__":
    unittest.main()
