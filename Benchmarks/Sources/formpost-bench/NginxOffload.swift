#if os(Linux)
import Foundation

/// nginx from Debian receiving uploads as its upload offload does: the request body written
/// to a file of its own (`client_body_in_file_only on`, buffers of `client_body_buffer_size
/// 128k`), then a header-only request naming the file (`X-File`) to a backend, here a
/// second server block of the same nginx answering 200. `worker_processes auto`.
final class NginxOffload {
    /// The port uploads go to (`POST /upload`).
    let port: Int
    /// Where the bodies are written, one file each, kept until removed.
    let bodies: String
    private let folder: String
    private let process: Process

    /// Starts nginx with its configuration, logs and bodies under `directory`/nginx.
    init(directory: String) throws {
        folder = directory + "/nginx"
        bodies = folder + "/bodies"
        try FileManager.default.createDirectory(atPath: bodies, withIntermediateDirectories: true)
        port = LocalPorts.free()
        let backend = LocalPorts.free()
        let configuration = """
        worker_processes auto;
        error_log \(folder)/error.log;
        pid \(folder)/nginx.pid;
        events { worker_connections 1024; }
        http {
          access_log off;
          client_body_temp_path \(bodies);
          proxy_temp_path \(folder)/proxy;
          server {
            listen 127.0.0.1:\(port);
            client_max_body_size 0;
            location /upload {
              client_body_in_file_only on;
              client_body_buffer_size 128k;
              proxy_pass_request_body off;
              proxy_set_header Content-Length "";
              proxy_set_header X-File $request_body_file;
              proxy_pass http://127.0.0.1:\(backend)/stored;
            }
          }
          server {
            listen 127.0.0.1:\(backend);
            location /stored { return 200 "stored\\n"; }
          }
        }
        """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["nginx", "-p", folder, "-c", folder + "/nginx.conf", "-g", "daemon off;"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        try LocalPorts.waitForListener(port)
    }

    /// nginx's processes: the master and its workers.
    var processes: [Int32] { [process.processIdentifier] + ProcessFigures.children(of: process.processIdentifier) }

    /// Stops nginx.
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
#endif
