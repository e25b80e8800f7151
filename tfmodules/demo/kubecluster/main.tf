# A real Kubernetes API server on this machine, for the demo cloud: an etcd and a
# kube-apiserver started from the toolchain's binaries by start.sh, on loopback, with a
# bearer token from random_password. Destroying it stops both and removes their data.

resource "random_id" "this" {
  byte_length = 4
}

# The API server's port: start.sh refuses one that is taken (replace the resource then).
resource "random_integer" "port" {
  min = 20000
  max = 32000
}

resource "random_password" "token" {
  length  = 40
  special = false
}

resource "terraform_data" "server" {
  input = {
    dir  = "${var.state_dir}/${var.cluster_name}-${random_id.this.hex}"
    port = random_integer.port.result
  }

  provisioner "local-exec" {
    command = "bash ${path.module}/start.sh"
    environment = {
      TP_DIR   = self.input.dir
      TP_PORT  = tostring(self.input.port)
      TP_BIN   = var.bin_dir
      TP_TOKEN = random_password.token.result
    }
  }

  provisioner "local-exec" {
    when    = destroy
    command = "bash ${path.module}/stop.sh"
    environment = {
      TP_DIR = self.input.dir
    }
  }
}

locals {
  endpoint = "https://127.0.0.1:${terraform_data.server.output.port}"
}
