#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The fast check of contrib/kubernetes (make check-container runs them in
# podman): the manifests parse; the ConfigMap holds exactly the shipped
# policies (as make-configmap prints them) and they pass `pcptunectl
# validate` in the layout kubelet gives them; the DaemonSet has what the issue
# asks of it; its mounts and privileges are the ones contrib/kubernetes/README
# lists.  Prints TAP.  Needs Debian's python3-yaml.
import os
import re
import shutil
import subprocess
import sys
import tempfile

top_srcdir = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
top_builddir = os.environ.get("top_builddir") or top_srcdir
pcptunectl = os.environ.get("PCPTUNECTL") or os.path.join(top_builddir, "pcptunectl")
kdir = os.path.join(top_srcdir, "contrib/kubernetes")

n = 0
failed = 0


def ok(cond, name, *diag):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, name))
    if not cond:
        failed += 1
        for d in diag:
            for line in str(d).splitlines():
                print("# " + line)
    return cond


try:
    import yaml
except ImportError:
    print("1..1")
    print("not ok 1 - python3-yaml is missing (build-aux/debian-packages-test installs it)")
    sys.exit(1)

# --- every manifest parses, one object per document, the kinds we ship.
docs = {}
for name in sorted(os.listdir(kdir)):
    if not name.endswith(".yaml"):
        continue
    path = os.path.join(kdir, name)
    try:
        with open(path) as f:
            objs = [o for o in yaml.safe_load_all(f) if o is not None]
        good = all(isinstance(o, dict) and o.get("apiVersion") and o.get("kind") and o.get("metadata", {}).get("name")
                   for o in objs) and len(objs) == 1
        ok(good, "%s parses: one object with apiVersion, kind and name" % name, objs)
        for o in objs:
            docs[o["kind"]] = o
    except yaml.YAMLError as e:
        ok(False, "%s parses" % name, e)
ok(sorted(docs) == ["ConfigMap", "DaemonSet", "Namespace"], "a Namespace, a ConfigMap and a DaemonSet", sorted(docs))
ns = docs.get("Namespace", {})
cm = docs.get("ConfigMap", {})
ds = docs.get("DaemonSet", {})
nsname = ns.get("metadata", {}).get("name")
ok(cm.get("metadata", {}).get("namespace") == nsname and ds.get("metadata", {}).get("namespace") == nsname,
   "the ConfigMap and the DaemonSet are in the namespace %s" % nsname)
ok(ns.get("metadata", {}).get("labels", {}).get("pod-security.kubernetes.io/enforce") == "privileged",
   "the namespace allows privileged pods (Pod Security Admission)")

# --- the ConfigMap: the shipped policies, as make-configmap prints them, and they validate.
data = cm.get("data", {})
shipped = sorted(f for f in os.listdir(os.path.join(top_srcdir, "policies")) if f.endswith(".yaml"))
same = sorted(data) == shipped and all(
    data[k] == open(os.path.join(top_srcdir, "policies", k)).read() for k in shipped)
ok(same, "the ConfigMap holds exactly policies/*.yaml", sorted(data), shipped)
gen = subprocess.run(["sh", os.path.join(kdir, "make-configmap")], capture_output=True, text=True)
ok(gen.returncode == 0 and gen.stdout == open(os.path.join(kdir, "configmap.yaml")).read(),
   "configmap.yaml is what make-configmap prints (run it after changing policies/)", gen.stderr)

tmp = tempfile.mkdtemp(prefix="pcptune-kubernetes.")
try:
    # The layout kubelet makes: a 0777 volume, "..data" -> "..<timestamp>", NAME -> ..data/NAME.
    vol = os.path.join(tmp, "policies.d")
    os.mkdir(vol)
    os.chmod(vol, 0o777)
    ts = "..2026_12_01_00_00_00.123456789"
    os.mkdir(os.path.join(vol, ts), 0o755)
    mode = cm and ds and next((v["configMap"].get("defaultMode", 0o644) for v in
                              ds["spec"]["template"]["spec"]["volumes"] if "configMap" in v), 0o644)
    for k, v in data.items():
        with open(os.path.join(vol, ts, k), "w") as f:
            f.write(v)
        os.chmod(os.path.join(vol, ts, k), mode)
        os.symlink("..data/" + k, os.path.join(vol, k))
    os.symlink(ts, os.path.join(vol, "..data"))
    if os.geteuid() == 0:
        r = subprocess.run([pcptunectl, "validate", vol], capture_output=True, text=True)
        ok(r.returncode == 0 and "%d policies" % len(data) in r.stdout and "0 warning(s)" in r.stdout,
           "pcptunectl validate accepts the ConfigMap as kubelet mounts it (defaultMode %04o)" % mode,
           r.stdout, r.stderr)
    else:
        print("ok %d - # SKIP pcptunectl validate with owner checks needs root" % (n + 1))
        globals()["n"] = n + 1
finally:
    shutil.rmtree(tmp)

# --- the DaemonSet: what the issue asks.
spec = ds.get("spec", {})
pod = spec.get("template", {}).get("spec", {})
ctrs = pod.get("containers", [])
ok(len(ctrs) == 1, "one container", ctrs)
c = ctrs[0] if ctrs else {}
sc = c.get("securityContext", {})
ok(pod.get("hostPID") is True and pod.get("hostNetwork") is True, "host PID and network namespaces (proc connector)")
ok(pod.get("priorityClassName") == "system-node-critical", "priorityClassName: system-node-critical")
ok(pod.get("tolerations") == [{"operator": "Exists"}], "tolerates every taint", pod.get("tolerations"))
ok(isinstance(pod.get("terminationGracePeriodSeconds"), int) and pod["terminationGracePeriodSeconds"] >= 30,
   "a termination grace period of at least 30 s for the restore", pod.get("terminationGracePeriodSeconds"))
probe = c.get("livenessProbe", {})
ok(probe.get("exec", {}).get("command") == ["pcptunectl", "liveness"] and probe.get("periodSeconds", 10) <= 60,
   "the liveness probe is pcptunectl liveness", probe)
us = spec.get("updateStrategy", {})
mu = us.get("rollingUpdate", {}).get("maxUnavailable")
ok(us.get("type") == "RollingUpdate" and mu is not None and str(mu) not in ("100%",) and
   us.get("rollingUpdate", {}).get("maxSurge") in (0, "0", "0%"),
   "rolling update with a bounded maxUnavailable and no surge", us)
res = c.get("resources", {})
ok(res.get("requests", {}).get("cpu") and res.get("requests", {}).get("memory") and res.get("limits", {}).get("memory"),
   "resource requests (cpu, memory) and a memory limit", res)
version = re.search(r"AC_INIT\(\[pcptune\],\s*\[([^]]+)\]", open(os.path.join(top_srcdir, "configure.ac")).read())
version = version.group(1) if version else "?"
ok(c.get("image", "").endswith("pcptune:" + version), "the image is pcptune:%s (configure.ac)" % version, c.get("image"))
ok(pod.get("volumes") and any(v.get("configMap", {}).get("name") == cm.get("metadata", {}).get("name")
                              for v in pod["volumes"]), "the pod mounts the ConfigMap")
args = c.get("args", [])
pdir = args[args.index("--policy-dir") + 1] if "--policy-dir" in args else "/etc/pcptune/policies.d"

# --- the README's tables are the DaemonSet's mounts and privileges.
readme = open(os.path.join(kdir, "README")).read()
rows = [[x.strip() for x in line.strip().strip("|").split("|")] for line in readme.splitlines()
        if line.startswith("| ") and not line.startswith("|---")]
fields = {r[0]: r[1] for r in rows if len(r) == 3 and r[0] != "field"}
mounts = {r[0]: r[1:4] for r in rows if len(r) == 5 and r[0] != "volume"}
actual_fields = {
    "hostPID": str(pod.get("hostPID")).lower(),
    "hostNetwork": str(pod.get("hostNetwork")).lower(),
    "privileged": str(sc.get("privileged", False)).lower(),
    "runAsUser": str(sc.get("runAsUser")),
    "readOnlyRootFilesystem": str(sc.get("readOnlyRootFilesystem", False)).lower(),
    "priorityClassName": pod.get("priorityClassName"),
    "tolerations": "every taint (operator: Exists)" if pod.get("tolerations") == [{"operator": "Exists"}] else "?",
    "terminationGracePeriodSeconds": str(pod.get("terminationGracePeriodSeconds")),
    "automountServiceAccountToken": str(pod.get("automountServiceAccountToken", True)).lower(),
}
ok(fields == actual_fields, "the README's privileges table is the DaemonSet's", "README: %s" % fields,
   "DaemonSet: %s" % actual_fields)
caps = sc.get("capabilities")
ok(caps is None, "no capability lists beside privileged: true (they would suggest a limit that is not there)", caps)
actual_mounts = {}
vols = {v["name"]: v for v in pod.get("volumes", [])}
for m in c.get("volumeMounts", []):
    v = vols.get(m["name"], {})
    src = ("ConfigMap " + v["configMap"]["name"]) if "configMap" in v else v.get("hostPath", {}).get("path", "?")
    actual_mounts[m["name"]] = [src, m["mountPath"], "read-only" if m.get("readOnly") else "read-write"]
ok(mounts == actual_mounts, "the README's mounts table is the DaemonSet's", "README: %s" % mounts,
   "DaemonSet: %s" % actual_mounts)
ok(set(vols) == set(actual_mounts), "every volume is mounted", sorted(vols), sorted(actual_mounts))
hostpaths = {v["hostPath"]["path"] for v in vols.values() if "hostPath" in v}
ok(hostpaths == {"/sys/fs/cgroup", "/run/pcptune", "/var/lib/prometheus/node-exporter"},
   "host directories: cgroups, the restore journal and lock, the textfile collector's", sorted(hostpaths))
ok(actual_mounts.get("policies", [None, None])[1] == pdir, "the ConfigMap is mounted where --policy-dir points", pdir)

print("1..%d" % n)
sys.exit(1 if failed else 0)
