"""Validates manifests rendered from deploy/helm/voxreel (script/check-deploy runs it in its venv).

Each Kubernetes object is checked against the JSON schema of its kind, strictly (an unknown field is an error), for
each Kubernetes version asked, with kubernetes-validate's bundled schemas: nothing is fetched. Custom resources whose
schemas are not bundled (KEDA's ScaledObject, prometheus-operator's ServiceMonitor) are checked here for the fields the
chart relies on instead. Then what a schema cannot see: every environment variable is one voxreel reads (src/config.ts),
probes name ports the container has, Services, the HPA and the ScaledObject point at what exists, and a worker's
termination grace period outlasts its drain, which outlasts the longest job deadline.
"""

import argparse
import os
import re
import sys

import kubernetes_validate
import yaml

# Custom resources (their schemas are not bundled): kind -> apiVersion; custom_problems checks the fields the chart sets.
CUSTOM_KINDS = {
    "ScaledObject": "keda.sh/v1alpha1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
}
# Variables read but not listed in src/config.ts: the AWS SDK's credentials.
OTHER_VARIABLES = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
# The defaults of the job deadlines (src/config.ts).
DEFAULT_DEADLINES_MS = {"TTS_TIMEOUT_MS": 60_000, "VIDEO_TIMEOUT_MS": 300_000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="src/config.ts, for the names of the variables")
    parser.add_argument("--kubernetes-version", action="append", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    with open(args.config) as f:
        variables = set(re.findall(r"^  ([A-Z][A-Z0-9_]+): Type\.", f.read(), re.M)) | OTHER_VARIABLES
    if "VIDEO_TIMEOUT_MS" not in variables:
        raise SystemExit(f"check-manifests: found no variables in {args.config}")

    failures = 0
    for filename in args.files:
        with open(filename) as f:
            objects = [o for o in yaml.safe_load_all(f) if o]
        problems = []
        for version in args.kubernetes_version:
            problems += schema_problems(objects, version)
        problems += custom_problems(objects)
        problems += cross_problems(objects, variables)
        for problem in problems:
            print(f"check-manifests: {os.path.basename(filename)}: {problem}", file=sys.stderr, flush=True)
        failures += len(problems)
        kinds = ", ".join(sorted({o["kind"] for o in objects}))
        verdict = "ok" if not problems else f"{len(problems)} problems"
        print(f"check-manifests: {os.path.basename(filename)}: {len(objects)} objects ({kinds}) against Kubernetes "
              f"{' and '.join(args.kubernetes_version)}: {verdict}", flush=True)
    return 1 if failures else 0


def name_of(o: dict) -> str:
    return f"{o['kind']}/{o['metadata']['name']}"


def schema_problems(objects: list, version: str) -> list:
    problems = []
    for o in objects:
        if o["kind"] in CUSTOM_KINDS:
            continue
        try:
            kubernetes_validate.validate(o, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            problems.append(f"{name_of(o)} against {version}: {path}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            problems.append(f"{name_of(o)}: {e.message}")
    return problems


def custom_problems(objects: list) -> list:
    problems = []
    for o in objects:
        expected = CUSTOM_KINDS.get(o["kind"])
        if expected is None:
            continue
        if o.get("apiVersion") != expected:
            problems.append(f"{name_of(o)}: apiVersion {o.get('apiVersion')}, expected {expected}")
        spec = o.get("spec") or {}
        if o["kind"] == "ScaledObject":
            low, high = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
            if not (isinstance(low, int) and isinstance(high, int) and 0 <= low <= high):
                problems.append(f"{name_of(o)}: replica counts {low}..{high}")
            for trigger in spec.get("triggers", []) or [None]:
                metadata = (trigger or {}).get("metadata", {})
                if (trigger or {}).get("type") != "prometheus" or not all(
                    isinstance(metadata.get(k), str) and metadata[k] for k in ("serverAddress", "query", "threshold")
                ):
                    problems.append(f"{name_of(o)}: a prometheus trigger needs string serverAddress, query, threshold")
        if o["kind"] == "ServiceMonitor":
            if not spec.get("selector", {}).get("matchLabels") or not spec.get("endpoints"):
                problems.append(f"{name_of(o)}: needs selector.matchLabels and endpoints")
    return problems


def env_of(container: dict, configmaps: dict) -> dict:
    """The container's variables: from its ConfigMaps, then its own `env` (a Secret's value shows as None)."""
    env = {}
    for source in container.get("envFrom", []):
        env.update(configmaps.get(source.get("configMapRef", {}).get("name"), {}))
    for item in container.get("env", []):
        env[item["name"]] = item.get("value")
    return env


def matches(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def cross_problems(objects: list, variables: set) -> list:
    problems = []
    configmaps = {o["metadata"]["name"]: o.get("data", {}) for o in objects if o["kind"] == "ConfigMap"}
    deployments = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Deployment"}

    for name, data in configmaps.items():
        for variable in sorted(set(data) - variables):
            problems.append(f"ConfigMap/{name}: {variable} is no variable voxreel reads (src/config.ts)")

    for name, d in deployments.items():
        pod = d["spec"]["template"]["spec"]
        if not matches(d["spec"]["selector"]["matchLabels"], d["spec"]["template"]["metadata"].get("labels", {})):
            problems.append(f"Deployment/{name}: the selector does not match the pod's labels")
        if not pod.get("securityContext", {}).get("runAsNonRoot"):
            problems.append(f"Deployment/{name}: pods may run as root")
        for c in pod["containers"]:
            where = f"Deployment/{name} container {c['name']}"
            env = env_of(c, configmaps)
            for variable in sorted(set(env) - variables):
                problems.append(f"{where}: {variable} is no variable voxreel reads (src/config.ts)")
            if not c.get("securityContext", {}).get("readOnlyRootFilesystem"):
                problems.append(f"{where}: the root file system is writable")
            ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                port = c.get(probe, {}).get("httpGet", {}).get("port")
                if port is None:
                    problems.append(f"{where}: no HTTP {probe}")
                elif isinstance(port, str) and port not in ports:
                    problems.append(f"{where}: {probe} names the port {port}, which the container lacks")
            listen = env.get("WORKER_PORT") if "worker" in c.get("args", []) else env.get("PORT")
            if listen is None or int(listen) not in ports.values():
                problems.append(f"{where}: listens on {listen}, which is not a container port")
            if "worker" in c.get("args", []):
                problems += drain_problems(where, pod, env)

    for o in objects:
        if o["kind"] == "Service":
            pods = [d for d in deployments.values() if matches(o["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])]
            if not pods:
                problems.append(f"{name_of(o)}: selects no Deployment's pods")
            for port in o["spec"]["ports"]:
                target = port.get("targetPort", port["port"])
                names = {p.get("name") for d in pods for c in d["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
                if isinstance(target, str) and target not in names:
                    problems.append(f"{name_of(o)}: targetPort {target} is no port of its pods")
        if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject"):
            target = o["spec"]["scaleTargetRef"]["name"]
            if target not in deployments:
                problems.append(f"{name_of(o)}: scales {target}, which is not rendered")
            elif "replicas" in deployments[target]["spec"]:
                problems.append(f"{name_of(o)}: Deployment/{target} sets replicas too (each apply would undo the scaling)")
    return problems


def drain_problems(where: str, pod: dict, env: dict) -> list:
    grace_ms = env.get("SHUTDOWN_GRACE_MS")
    if grace_ms is None:
        return [f"{where}: no SHUTDOWN_GRACE_MS"]
    longest = max(int(env.get(k) or default) for k, default in DEFAULT_DEADLINES_MS.items())
    problems = []
    if int(grace_ms) < longest:
        problems.append(f"{where}: SHUTDOWN_GRACE_MS {grace_ms} is under the longest job deadline {longest} ms: "
                        "a job running at SIGTERM would be cut short")
    period = pod.get("terminationGracePeriodSeconds", 30)
    if period * 1000 <= int(grace_ms):
        problems.append(f"{where}: terminationGracePeriodSeconds {period} does not outlast SHUTDOWN_GRACE_MS {grace_ms}")
    return problems

if __name__ == "__main__":
    sys.exit(main())
