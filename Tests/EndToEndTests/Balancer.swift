import Foundation
import TestSupport

/// nginx from Debian's packages as the load balancer in front of replicas: round robin, a replica
/// that refuses a connection skipped for the next, bodies streamed both ways.
final class Balancer {
    let process: RunningProgram
    let directory: URL
    let url: URL

    init(replicas: [ServerProcess], in scratch: Scratch) async throws {
        directory = scratch.url.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try freeLocalPort()
        let servers = replicas.map { "server 127.0.0.1:\($0.url.port!) max_fails=1 fail_timeout=10s;" }.joined(separator: "\n        ")
        let dir = directory.path
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            error_log \(dir)/error.log warn;
            pid \(dir)/nginx.pid;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(dir)/body;
                proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi;
                scgi_temp_path \(dir)/scgi;
                upstream depot {
                    \(servers)
                    keepalive 32;
                }
                server {
                    listen 127.0.0.1:\(port);
                    client_max_body_size 0;
                    location / {
                        proxy_pass http://depot;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header Host $http_host;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header X-Forwarded-Proto $scheme;
                        proxy_request_buffering off;
                        proxy_buffering off;
                        proxy_read_timeout 300s;
                    }
                }
            }
            """
        try configuration.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        process = try await RunningProgram.start("/usr/sbin/nginx", ["-p", dir, "-c", directory.appendingPathComponent("nginx.conf").path])
        url = URL(string: "http://127.0.0.1:\(port)")!
        guard
            try await eventually(
                within: 20,
                { try await Command.curl(["-o", "/dev/null", "-w", "%{http_code}", url.absoluteString + "/healthz"]).text == "200" })
        else {
            throw E2EFailure(
                "nginx did not answer on \(url): \((try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")"
            )
        }
    }

    var environment: [String: String] { ["DEPOT_SERVER": url.absoluteString, "DEPOT_TOKEN": ServerProcess.adminToken] }
}
