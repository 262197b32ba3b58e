#!/usr/bin/python3
"""A client nobody here wrote: Python stubs generated from proto/kiln.proto with Debian's
grpc_tools (python3-grpc-tools) talk to a real `kiln serve`: submit a job, watch it to the end,
export its best records, and get INVALID_ARGUMENT naming the field for a malformed job.

usage: python_client_test.py KILN_BINARY PROTO_DIR
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def main():
    kiln, proto_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="kiln_py_") as tmp:
        from grpc_tools import protoc
        rc = protoc.main(["grpc_tools.protoc", "-I" + proto_dir, "--python_out=" + tmp,
                          "--grpc_python_out=" + tmp, os.path.join(proto_dir, "kiln.proto")])
        assert rc == 0, "protoc failed"
        sys.path.insert(0, tmp)
        import grpc
        import kiln_pb2
        import kiln_pb2_grpc

        log_path = os.path.join(tmp, "serve.log")
        log = open(log_path, "w")
        serve = subprocess.Popen([kiln, "serve", "--db", os.path.join(tmp, "k.db"),
                                  "--listen", "127.0.0.1:0"], stdout=log, stderr=subprocess.STDOUT)
        try:
            address = None
            deadline = time.time() + 30
            while address is None and time.time() < deadline:
                m = re.search(r"kiln serve listening on (\S+)", open(log_path).read())
                if m:
                    address = m.group(1)
                else:
                    time.sleep(0.05)
            assert address, "kiln serve did not start: " + open(log_path).read()
            stub = kiln_pb2_grpc.TunerStub(grpc.insecure_channel(address))

            # A malformed job: the field is named.
            try:
                stub.SubmitJob(kiln_pb2.SubmitJobRequest(
                    spec_yaml="workloads: [\"dense:M=16,N=16,K=16\"]\nbudget: {trials: -1}\n"),
                    timeout=10)
                raise AssertionError("a negative budget was accepted")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
                assert "budget.trials" in e.details(), e.details()

            spec = ("name: from-python\nworkloads: [\"dense:M=16,N=32,K=32\"]\n"
                    "template: dense_nopack.x86\ntuner: random\nbudget: {trials: 6}\n"
                    "measure: {number: 1, repeat: 1, cooldown_interval: 0, threads: 1, "
                    "n_parallel: 1}\n")
            job = stub.SubmitJob(kiln_pb2.SubmitJobRequest(spec_yaml=spec, base_dir=tmp),
                                 timeout=10).job_id
            assert job > 0
            last = None
            events = 0
            for status in stub.WatchJob(kiln_pb2.JobRef(job_id=job), timeout=120):
                events += 1
                last = status
            assert last is not None and last.state == "done", last
            assert last.records == 6, last
            assert last.tasks[0].template_name == "dense_nopack.x86", last
            assert last.tasks[0].best_gflops > 0, last
            exported = stub.ExportJob(kiln_pb2.ExportJobRequest(job_id=job), timeout=10)
            assert exported.lines == 1, exported
            assert '"dense_nopack.x86"' in exported.log, exported.log
            listed = stub.ListJobs(kiln_pb2.ListJobsRequest(), timeout=10)
            assert [j.name for j in listed.jobs] == ["from-python"], listed
            print("python client: job %d done after %d watch events; exported %d line(s)"
                  % (job, events, exported.lines))
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
