# No MySQL Terraform provider is available here, so the user and database are made and
# kept in step by the mysql client in local-exec provisioners. The admin connection comes
# from the MYSQL_* environment the controller gives terraform; the new password reaches
# the client on standard input, never on a command line. Nothing available to terraform
# can read a MySQL server during a plan, so the controller reads it before each plan and
# passes what it found as var.observed (see README.md, "How drift is seen").

resource "random_password" "this" {
  length  = 32
  special = false
}

# The user and database by name: destroying it drops both. converge makes them.
resource "terraform_data" "this" {
  input = {
    database = var.database_name
    role     = var.role_name
  }
  triggers_replace = [var.database_name, var.role_name]

  provisioner "local-exec" {
    when    = destroy
    command = "sh ${path.module}/destroy.sh"
    environment = {
      TP_DATABASE = self.input.database
      TP_ROLE     = self.input.role
    }
  }
}

locals {
  observed = var.observed
  # How the server differs from what this module asks for; empty when it does not.
  drift = local.observed == null ? [] : concat(
    local.observed.database ? [] : ["database ${var.database_name} is missing"],
    local.observed.user ? [] : ["user ${var.role_name} is missing"],
    local.observed.user && local.observed.connection_limit != max(var.connection_limit, 0) ? ["connection limit is ${local.observed.connection_limit}"] : [],
    local.observed.database && local.observed.mark == "" ? ["database is not marked by a converge"] : [],
  )
  # The mark of the last converge: converge.sh stores it in terraplane.marks, so it reads
  # back unchanged while the server is in step, and is new when anything drifted.
  mark = local.observed == null ? "" : (length(local.drift) == 0 ? local.observed.mark : "converged ${plantimestamp()}")
}

# Creates the user and database, or brings them back in step: replaced (re-run) when an
# input changes or the server drifted. Replacing it destroys nothing.
resource "terraform_data" "converge" {
  triggers_replace = {
    mark             = local.mark
    connection_limit = var.connection_limit
    engine_version   = var.engine_version
  }

  provisioner "local-exec" {
    command = "sh ${path.module}/converge.sh"
    environment = {
      TP_DATABASE         = terraform_data.this.output.database
      TP_ROLE             = terraform_data.this.output.role
      TP_PASSWORD         = random_password.this.result
      TP_ENGINE_VERSION   = var.engine_version
      TP_CONNECTION_LIMIT = tostring(var.connection_limit)
      TP_MARK             = local.mark
    }
  }
}
