# No MySQL Terraform provider is available here, so the user and database are made and
# kept in step by the mysql client in local-exec provisioners. The admin connection comes
# from the MYSQL_* environment the controller gives terraform; the new password reaches
# the client on standard input, never on a command line. Nothing available to terraform
# can read a MySQL server during a plan, so a database or user dropped by hand is not seen
# (see README.md).

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

# Creates the user and database, or brings them back in step: replaced (re-run) whenever
# an input changes. Replacing it destroys nothing.
resource "terraform_data" "converge" {
  triggers_replace = {
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
    }
  }
}
