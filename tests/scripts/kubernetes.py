#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The fast check of contrib/kubernetes (make check-container runs them in
# podman): the manifests parse; the ConfigMap holds exactly the shipped
# policies (as make-configmap prints them) and they pass `pcptunectl
# validate` in the layout kubelet gives them; the DaemonSet has what the issue
# asks of it; its mounts and privileges are the ones contrib/kubernetes/README
# lists.  Prints TAP.  Needs Debian's python3-yaml.
import json
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
DIGEST_RE = r"[^@\s]+/pcptune@sha256:[0-9a-f]{64}"
ok(re.fullmatch(DIGEST_RE, c.get("image", "")) is not None, "the image is pinned by digest (REGISTRY/pcptune@sha256:...)",
   c.get("image"))
ok(pod.get("volumes") and any(v.get("configMap", {}).get("name") == cm.get("metadata", {}).get("name")
                              for v in pod["volumes"]), "the pod mounts the ConfigMap")
args = c.get("args", [])
pdir = args[args.index("--policy-dir") + 1] if "--policy-dir" in args else "/etc/pcptune/policies.d"
ok(pod.get("nodeSelector") == {"kubernetes.io/os": "linux"}, "nodeSelector kubernetes.io/os: linux", pod.get("nodeSelector"))
CANARY_LABEL = "pcptune.io/canary"
terms = pod.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {}) \
    .get("nodeSelectorTerms", [])


def excludes(term, key, value):
    return any(e.get("key") == key and e.get("operator") == "NotIn" and value in e.get("values", [])
               for e in term.get("matchExpressions", []))


# Terms are ORed: every one of them must exclude the label.
ok(terms and all(excludes(t, CANARY_LABEL, "true") for t in terms),
   "nodeAffinity keeps the main DaemonSet off %s=true nodes (every term)" % CANARY_LABEL, terms)
ok(terms and all(excludes(t, "pcptune.io/disabled", "true") for t in terms),
   "nodeAffinity keeps it off pcptune.io/disabled=true nodes", terms)
rp = c.get("readinessProbe", {})
ok(rp.get("exec", {}).get("command") == ["pcptunectl", "check"], "the readiness probe is pcptunectl check", rp)
ok(isinstance(spec.get("minReadySeconds"), int) and spec["minReadySeconds"] >= 30,
   "minReadySeconds >= 30: a rollout waits for a node to apply its policies", spec.get("minReadySeconds"))
ok("--on-stop=keep" in args, "--on-stop=keep: a rollout hands the journal over instead of restoring", args)
ok(not any(a in ("--dry-run", "-n") for a in args), "the main DaemonSet is not a dry run", args)

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


# --- The canary: contrib/kubernetes/canary/daemonset.yaml.
def load_one(path):
    try:
        with open(path) as f:
            objs = [o for o in yaml.safe_load_all(f) if o is not None]
    except (OSError, yaml.YAMLError) as e:
        ok(False, "%s parses" % os.path.relpath(path, top_srcdir), e)
        return {}
    ok(len(objs) == 1 and isinstance(objs[0], dict), "%s parses: one object" % os.path.relpath(path, top_srcdir), objs)
    return objs[0] if objs and isinstance(objs[0], dict) else {}


def opt(argv, name):
    """The value of --name VALUE or --name=VALUE in argv, else None."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


cy = load_one(os.path.join(kdir, "canary/daemonset.yaml"))
cspec = cy.get("spec", {})
cpod = cspec.get("template", {}).get("spec", {})
cc = (cpod.get("containers") or [{}])[0]
cargs = cc.get("args", [])
ok(cy.get("kind") == "DaemonSet" and cy.get("metadata", {}).get("namespace") == nsname and
   cy.get("metadata", {}).get("name") not in (None, ds.get("metadata", {}).get("name")),
   "the canary is a DaemonSet of its own in the namespace %s" % nsname, cy.get("metadata"))
main_sel = spec.get("selector", {}).get("matchLabels", {})
can_sel = cspec.get("selector", {}).get("matchLabels", {})
can_labels = cspec.get("template", {}).get("metadata", {}).get("labels", {})
main_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
ok(can_sel and all(can_labels.get(k) == v for k, v in can_sel.items()) and
   not all(can_labels.get(k) == v for k, v in main_sel.items()) and
   not all(main_labels.get(k) == v for k, v in can_sel.items()),
   "the canary's selector matches its pods and neither DaemonSet's selector matches the other's pods",
   main_sel, can_sel, can_labels)
ok("--dry-run" in cargs or "-n" in cargs, "the canary runs --dry-run", cargs)
cstate = opt(cargs, "--state-dir") or "/run/pcptune"
ok(cstate != "/run/pcptune" and cstate.startswith("/run/"), "its own state directory %s (not /run/pcptune)" % cstate, cargs)
cmetrics = opt(cargs, "--metrics-file") or "pcptune.prom"
ok(cmetrics != "pcptune.prom" and "/" not in cmetrics and cmetrics.endswith(".prom"),
   "its own metrics file %s (not pcptune.prom)" % cmetrics, cargs)
ok(opt(cargs, "--bulk-free-period") == "0", "no bulk-free tracing in the canary (--bulk-free-period 0)", cargs)
ok(opt(cargs, "--policy-dir") is not None, "an explicit --policy-dir", cargs)
ok(cpod.get("nodeSelector", {}).get(CANARY_LABEL) == "true" and
   cpod.get("nodeSelector", {}).get("kubernetes.io/os") == "linux",
   "nodeSelector %s: \"true\" and kubernetes.io/os: linux: the label the main DaemonSet avoids" % CANARY_LABEL,
   cpod.get("nodeSelector"))
ok(cc.get("livenessProbe", {}).get("exec", {}).get("command") == ["pcptunectl", "--state-dir", cstate, "liveness"],
   "its liveness probe is pcptunectl --state-dir %s liveness" % cstate, cc.get("livenessProbe"))
ok(cc.get("readinessProbe", {}).get("exec", {}).get("command") == ["pcptunectl", "--state-dir", cstate, "check"],
   "its readiness probe is pcptunectl --state-dir %s check" % cstate, cc.get("readinessProbe"))
csc = cc.get("securityContext", {})
ok(csc.get("privileged") is False and csc.get("allowPrivilegeEscalation") is False and
   csc.get("capabilities", {}).get("drop") == ["ALL"] and csc.get("capabilities", {}).get("add") == ["NET_ADMIN"],
   "the canary is not privileged (/proc/sys read-only): all capabilities dropped but NET_ADMIN", csc)
cvols = {v["name"]: v for v in cpod.get("volumes", [])}
cmounts = {}
for m in cc.get("volumeMounts", []):
    v = cvols.get(m["name"], {})
    src = ("ConfigMap " + v["configMap"]["name"]) if "configMap" in v else v.get("hostPath", {}).get("path", "?")
    cmounts[m["mountPath"]] = (src, bool(m.get("readOnly")))
chost = {v["hostPath"]["path"] for v in cvols.values() if "hostPath" in v}
ok(cmounts.get(cstate) == (cstate, False) and "/run/pcptune" not in chost,
   "it mounts %s at %s and never /run/pcptune (the main journal and lock)" % (cstate, cstate), cmounts)
ok(cmounts.get("/sys/fs/cgroup", (None, False))[1] is True, "the cgroup tree is mounted read-only (recursively only with recursiveReadOnly)", cmounts)
cpdir = opt(cargs, "--policy-dir")
ccm = cmounts.get(cpdir, ("", False))[0]
ok(ccm.startswith("ConfigMap ") and ccm != "ConfigMap " + cm.get("metadata", {}).get("name", "") and cmounts[cpdir][1],
   "its policies: a ConfigMap of its own (%s), read-only, at --policy-dir" % ccm, cmounts)
ok(re.fullmatch(DIGEST_RE, cc.get("image", "")) is not None, "the canary's image is pinned by digest", cc.get("image"))
ok(cspec.get("updateStrategy", {}).get("rollingUpdate", {}).get("maxSurge") in (0, "0", "0%"),
   "the canary never runs two pods on a node", cspec.get("updateStrategy"))

# --- node-problem-detector: the patch mounts the state directories the plugin checks (main and canary).
npd = load_one(os.path.join(kdir, "node-problem-detector/daemonset-patch.yaml"))
npod = npd.get("spec", {}).get("template", {}).get("spec", {})
nvols = {v["name"]: v for v in npod.get("volumes", [])}
nmounts = {m["mountPath"]: (nvols.get(m["name"], {}).get("hostPath", {}).get("path"), m.get("readOnly"))
           for ctr in npod.get("containers", []) for m in ctr.get("volumeMounts", [])}
plugin = json.load(open(os.path.join(kdir, "node-problem-detector/pcptune-plugin.json")))
pargs = [a for r in plugin.get("rules", []) for a in r.get("args", [])]
ok(sorted(nmounts.get(a, (None,))[0] or "" for a in pargs) == sorted(["/run/pcptune", cstate]) and
   all(nmounts[a][1] is True for a in pargs),
   "NPD checks the main and the canary's state directories, mounted read-only from the host", pargs, nmounts)

# --- The uninstall: the emptied ConfigMap replaces the main one and holds no policy.
ecm = load_one(os.path.join(kdir, "uninstall/configmap-empty.yaml"))
ok(ecm.get("kind") == "ConfigMap" and ecm.get("metadata", {}).get("name") == cm.get("metadata", {}).get("name") and
   ecm.get("metadata", {}).get("namespace") == nsname and not ecm.get("data") and not ecm.get("binaryData"),
   "uninstall/configmap-empty.yaml is the ConfigMap %s with no data" % cm.get("metadata", {}).get("name"), ecm)

# wait-restored against a fake kubectl: pods whose health files say HELD=N, round after round.
tmp = tempfile.mkdtemp(prefix="pcptune-wait-restored.")
try:
    fake = os.path.join(tmp, "kubectl")
    with open(fake, "w") as f:
        f.write("""#!/bin/sh
# get pods: the names in $FAKE/pods; exec POD -- cat /run/pcptune/health:
# the health file with the next HELD of $FAKE/POD (one per line, the last
# repeated); no such file: exit 1 (pod not running).
case "$*" in
*" get pods "*) cat "$FAKE/pods" ;;
*" exec "*)
	pod=$(printf '%s' "$*" | sed 's/.* exec pod\\/\\([^ ]*\\) -- .*/\\1/')
	[ -f "$FAKE/$pod" ] || exit 1
	n=$(cat "$FAKE/$pod.n" 2>/dev/null || echo 1)
	held=$(sed -n "${n}p" "$FAKE/$pod"); [ -n "$held" ] || held=$(tail -n 1 "$FAKE/$pod")
	echo $((n + 1)) >"$FAKE/$pod.n"
	printf 'PCPTUNE_HEALTH=1\\nVERDICT=ok\\nREASON=sampling\\nUPDATED=1\\nINTERVAL=10\\nHELD=%s\\n' "$held" ;;
*) exit 2 ;;
esac
""")
    os.chmod(fake, 0o755)

    def scenario(name, pods, helds, want_rc, want_re, timeout="5"):
        d = os.path.join(tmp, name)
        os.mkdir(d)
        with open(os.path.join(d, "pods"), "w") as f:
            f.write("".join("pod/%s\n" % p for p in pods))
        for p, seq in helds.items():
            with open(os.path.join(d, p), "w") as f:
                f.write("".join("%d\n" % h for h in seq))
        r = subprocess.run(["sh", os.path.join(kdir, "uninstall/wait-restored"), "-t", timeout],
                           capture_output=True, text=True,
                           env=dict(os.environ, KUBECTL=fake, FAKE=d, WAIT_RESTORED_PERIOD="0"))
        out = r.stdout + r.stderr
        ok(r.returncode == want_rc and re.search(want_re, out) is not None,
           "wait-restored: %s -> %d" % (name, want_rc), "exit %d" % r.returncode, out)

    scenario("restored after 3 rounds", ["a", "b"], {"a": [1, 1, 0], "b": [0]}, 0,
             r"pod/a: holds 1 value\(s\)\n(.|\n)*pod/a: holds 1(.|\n)*the 2 pod\(s\) hold no value")
    scenario("one never restores", ["a", "c"], {"a": [0], "c": [2]}, 1, r"pod/c: holds 2 value\(s\)(.|\n)*1 of 2 pod", "0")
    scenario("a pod without health file", ["a", "gone"], {"a": [0]}, 1, r"pod/gone: no health file read", "0")
    scenario("no pod", [], {}, 1, r"no pod labelled")
finally:
    shutil.rmtree(tmp)

# --- The README walks canary -> rollout -> uninstall, in that order, with the files shipped.
heads = [l.strip() for i, l in enumerate(readme.splitlines()[:-1]) if re.fullmatch(r"-+", readme.splitlines()[i + 1].strip() or "x")]
order = [h for h in heads if h in ("Canary", "Roll out", "Uninstall")]
ok(order == ["Canary", "Roll out", "Uninstall"], "the README's sections Canary, Roll out, Uninstall, in that order", heads)
for f in ("canary/daemonset.yaml", "uninstall/configmap-empty.yaml", "uninstall/wait-restored",
          "node-problem-detector/pcptune-plugin.json", "node-problem-detector/daemonset-patch.yaml"):
    ok(f in readme, "the README names %s" % f)
ok("REGISTRY/pcptune@sha256:" in readme and "--digestfile" in readme,
   "the README explains the digest placeholder and how to get the digest")

print("1..%d" % n)
sys.exit(1 if failed else 0)
