import unittest

from checks import deploy


class PromQL(unittest.TestCase):
    def test_names(self):
        e = ('sum by (cgroup) (rate(gpuio_cgroup_vfs_bytes_total{op="read",device=~"gpuio_fake"}[5m])) '
             '/ on (cgroup) job:gpuio_cgroup_io:rate5m + histogram_quantile(0.9, gpuio_lat_seconds_bucket)')
        self.assertEqual(deploy.promql_names(e), {"gpuio_cgroup_vfs_bytes_total", "job:gpuio_cgroup_io:rate5m",
                                                  "gpuio_lat_seconds_bucket"})
        self.assertEqual(deploy.promql_names('up{job="gpuio_monitor"}'), set())

    def test_unquote(self):
        self.assertEqual(deploy.promql_unquote('a{x="q\\"b", y="c"}'), 'a{x="", y=""}')


if __name__ == "__main__":
    unittest.main()
