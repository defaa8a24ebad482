"""The Kubernetes pod template (deploy/kubernetes/flink-deployment.yaml) agrees
with itself and with the sidecar image: the launcher lands where the
TaskManager looks for it, the TaskManager reaches the pool where it listens,
and the probes ask the pool's HTTP endpoint; the pool asks for a token that
both containers read from one Secret, and a NetworkPolicy admits to the
TaskManager pods only Flink's pods and, on the HTTP port, monitoring
(docs/security.md).  Run: python3 -m unittest
discover -s tests/deploy (Debian's python3 and python3-yaml)."""
import json
import os
import re
import unittest

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEMPLATE = os.path.join(ROOT, "deploy", "kubernetes", "flink-deployment.yaml")
MAIN = "flink-main-container"  # the name the operator merges the TaskManager into
LAUNCHER = "pyflink-udf-runner.sh"
# where the images keep files a mount must not hide: Flink's home, and the
# sidecar image's own files (the launcher install-launcher copies from)
IMAGE_DIRS = ["/opt/flink", "/opt/fnworker", "/usr", "/bin", "/lib", "/etc", "/sbin"]


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def flag(args, name):
    """The value of --name in an argument list (--name V or --name=V)."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def host_port(addr):
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


def env(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def mounts(container):
    return {m["name"]: m for m in container.get("volumeMounts", [])}


def hides(path, image_dir):
    """A mount at path hides image_dir's files when it is image_dir or above it,
    or lands inside it."""
    path, image_dir = path.rstrip("/") or "/", image_dir.rstrip("/")
    return (image_dir == path or image_dir.startswith(path + "/") or path == "/"
            or path.startswith(image_dir + "/"))


def dockerfile_exec_form(instruction):
    m = re.search(r"^%s\s+(\[.*\])\s*$" % instruction, read("Dockerfile"), re.M)
    return json.loads(m.group(1)) if m else None


class PodTemplate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(TEMPLATE) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        deployments = [d for d in docs if d.get("kind") == "FlinkDeployment"]
        assert len(deployments) == 1, "one FlinkDeployment in %s" % TEMPLATE
        cls.deployment = deployments[0]
        cls.policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
        cls.pod = deployments[0]["spec"]["taskManager"]["podTemplate"]["spec"]
        cls.containers = {c["name"]: c for c in cls.pod["containers"]}
        cls.inits = cls.pod.get("initContainers", [])
        cls.tm = cls.containers[MAIN]
        sidecars = [c for c in cls.pod["containers"] if c.get("args", [None])[0] == "pool"]
        assert len(sidecars) == 1, "one container runs the pool"
        cls.sidecar = sidecars[0]
        installers = [c for c in cls.inits if c.get("args", [None])[0] == "install-launcher"]
        assert len(installers) == 1, "one initContainer runs install-launcher"
        cls.init = installers[0]
        cls.volumes = {v["name"]: v for v in cls.pod["volumes"]}

    def test_launcher_volume_is_an_emptydir_shared_by_init_and_taskmanager(self):
        args = self.init["args"]
        self.assertEqual(len(args), 2, "install-launcher DIR")
        init_mount = [m for m in self.init["volumeMounts"] if m["mountPath"] == args[1]]
        self.assertEqual(len(init_mount), 1, "install-launcher's DIR is the initContainer's mount")
        name = init_mount[0]["name"]
        self.assertIn("emptyDir", self.volumes.get(name, {}), "volume %s is an emptyDir" % name)
        self.assertIn(name, mounts(self.tm), "the TaskManager mounts %s" % name)

    def test_runner_dir_is_where_the_launcher_is_copied(self):
        name = [m for m in self.init["volumeMounts"] if m["mountPath"] == self.init["args"][1]][0]["name"]
        tm_path = mounts(self.tm)[name]["mountPath"]
        self.assertEqual(env(self.tm).get("PYFLINK_UDF_RUNNER_DIR"), tm_path)
        self.assertTrue(mounts(self.tm)[name].get("readOnly"), "the TaskManager only reads the launcher")

    def test_mounts_hide_no_image_files(self):
        for c, what in ((self.init, "initContainer"), (self.tm, "TaskManager"), (self.sidecar, "sidecar")):
            for m in c.get("volumeMounts", []):
                for d in IMAGE_DIRS:
                    self.assertFalse(hides(m["mountPath"], d),
                                     "%s mounts %s over %s" % (what, m["mountPath"], d))

    def test_taskmanager_reaches_the_pool_on_loopback(self):
        addr = env(self.tm).get("FNW_POOL_ADDRESS")
        self.assertIsNotNone(addr, "FNW_POOL_ADDRESS in the TaskManager's env")
        listen = flag(self.sidecar["args"], "--listen")
        self.assertIsNotNone(listen, "the pool's --listen")
        self.assertEqual(host_port(addr)[1], host_port(listen)[1], "pool port")
        self.assertIn(host_port(addr)[0], ("127.0.0.1", "localhost"))
        self.assertEqual(host_port(listen)[0], "127.0.0.1",
                         "the pool listens on the pod's loopback only")

    def test_probes_ask_the_pools_health_endpoint(self):
        http = flag(self.sidecar["args"], "--http-listen")
        self.assertIsNotNone(http, "the pool's --http-listen")
        host, port = host_port(http)
        self.assertIn(host, ("0.0.0.0", "::", ""), "the kubelet probes the pod's address, not loopback")
        named = {p["name"]: p["containerPort"] for p in self.sidecar.get("ports", []) if "name" in p}
        for kind in ("readinessProbe", "livenessProbe"):
            probe = self.sidecar[kind]["httpGet"]
            self.assertEqual(probe["path"], "/healthz", kind)
            self.assertEqual(named.get(probe["port"], probe["port"]), port, kind + " port")

    def test_init_and_sidecar_use_the_same_image(self):
        self.assertEqual(self.init["image"], self.sidecar["image"])
        for c in (self.init, self.sidecar):
            self.assertNotIn("command", c, "the image's ENTRYPOINT interprets the args")

    def test_commands_exist_in_the_image(self):
        entry = read("scripts/image/entrypoint.sh")
        self.assertEqual(dockerfile_exec_form("ENTRYPOINT"), ["/opt/fnworker/entrypoint"])
        for cmd in ("pool", "install-launcher"):
            self.assertRegex(entry, r"(?m)^\s*%s\)" % re.escape(cmd), "entrypoint command " + cmd)
        self.assertIn(LAUNCHER, entry, "install-launcher copies " + LAUNCHER)

    def test_image_default_command_matches_the_template_pool_port(self):
        cmd = dockerfile_exec_form("CMD")
        self.assertEqual(cmd[0], "pool")
        self.assertEqual(host_port(flag(cmd, "--listen"))[1],
                         host_port(flag(self.sidecar["args"], "--listen"))[1])
        exposed = re.search(r"^EXPOSE\s+(.*)$", read("Dockerfile"), re.M).group(1).split()
        for a in ("--listen", "--http-listen"):
            self.assertIn(str(host_port(flag(self.sidecar["args"], a))[1]), exposed, a + " port exposed")


    def test_launcher_token_from_one_secret_in_both_containers(self):
        token_file = flag(self.sidecar["args"], "--token-file")
        self.assertIsNotNone(token_file, "the pool asks for a token (--token-file)")
        self.assertEqual(env(self.tm).get("FNW_POOL_TOKEN_FILE"), token_file,
                         "the launcher reads the same file")
        tdir = os.path.dirname(token_file)
        secret_of = {}
        for c, what in ((self.sidecar, "sidecar"), (self.tm, "TaskManager")):
            m = [m for m in c.get("volumeMounts", []) if m["mountPath"] == tdir]
            self.assertEqual(len(m), 1, "the %s mounts %s" % (what, tdir))
            self.assertTrue(m[0].get("readOnly"), "the %s only reads the token" % what)
            vol = self.volumes.get(m[0]["name"], {})
            self.assertIn("secret", vol, "%s is a Secret volume" % m[0]["name"])
            secret_of[what] = vol["secret"]["secretName"]
        self.assertEqual(secret_of["sidecar"], secret_of["TaskManager"], "one Secret")
        self.assertNotIn("FNW_POOL_TOKEN", env(self.tm), "the token is not in the pod spec")
        self.assertNotIn("FNW_POOL_TOKEN", env(self.sidecar), "the token is not in the pod spec")

    def test_no_unauthenticated_worker_endpoint(self):
        self.assertIsNone(flag(self.sidecar["args"], "--grpc-listen"),
                          "BeamFnExternalWorkerPool has no token: off")
        for f in self.sidecar["args"]:
            self.assertFalse(f.startswith("--allow-worker-flag"), "launchers pass only the default flags")

    def test_network_policy_admits_only_flink_and_monitoring(self):
        self.assertEqual(len(self.policies), 1, "one NetworkPolicy")
        spec = self.policies[0]["spec"]
        name = self.deployment["metadata"]["name"]
        # the labels the Flink Kubernetes operator sets on a deployment's TaskManager pods
        self.assertEqual(spec["podSelector"]["matchLabels"], {"app": name, "component": "taskmanager"})
        self.assertIn("Ingress", spec["policyTypes"])
        http_port = host_port(flag(self.sidecar["args"], "--http-listen"))[1]
        launcher_port = host_port(flag(self.sidecar["args"], "--listen"))[1]
        for rule in spec["ingress"]:
            ports = [p["port"] for p in rule.get("ports", [])]
            self.assertNotIn(launcher_port, ports, "the launcher port is never admitted")
            for src in rule["from"]:
                if "podSelector" in src and "namespaceSelector" not in src:
                    self.assertEqual(src["podSelector"]["matchLabels"], {"app": name},
                                     "only this deployment's Flink pods on any port")
                else:
                    self.assertEqual(ports, [http_port], "others reach only the HTTP port")


class Helpers(unittest.TestCase):
    def test_hides(self):
        self.assertTrue(hides("/opt/flink", "/opt/flink"))
        self.assertTrue(hides("/opt", "/opt/flink"))
        self.assertTrue(hides("/opt/flink/lib", "/opt/flink"))
        self.assertFalse(hides("/opt/fnworker-launcher", "/opt/fnworker"))
        self.assertFalse(hides("/opt/fnworker-launcher", "/opt/flink"))

    def test_flag(self):
        self.assertEqual(flag(["pool", "--listen", "a:1"], "--listen"), "a:1")
        self.assertEqual(flag(["pool", "--listen=a:2"], "--listen"), "a:2")
        self.assertIsNone(flag(["pool"], "--listen"))


if __name__ == "__main__":
    unittest.main()
