# Applies hot, warm and cold tiers against the emulator, checks what the module hands to node pools,
# then destroys them (tofu test destroys in reverse order at the end).

run "network" {
  variables {
    name = "storage-tiers-test"
  }
  module {
    source = "./tests/setup"
  }
}

run "all_tiers" {
  variables {
    name       = "st-test"
    network_id = run.network.network_id
    hot = {
      capacity_tib        = 20
      min_throughput_gbps = 4
      min_iops            = 1000000
    }
    warm = {
      capacity_tib        = 100
      min_throughput_gbps = 5
    }
    cold = {
      bucket_name  = "st-test-cold-0001"
      capacity_tib = 1024
      object_lifecycle = {
        ia_after_days      = 30
        archive_after_days = 90
      }
      cache = {
        size_gib        = 1024
        hot_dataset_gib = 1000
      }
    }
  }

  assert {
    condition     = length(output.ids) == 3 && output.ids["cold"] == "st-test-cold-0001"
    error_message = "expected three tiers with the bucket named as asked, got ${jsonencode(output.ids)}"
  }
  assert {
    condition     = length(output.fstab_lines) == 2 && strcontains(output.fstab_lines[0], "/mnt/st-test-hot")
    error_message = "expected the hot then warm fstab lines, got ${jsonencode(output.fstab_lines)}"
  }
  assert {
    condition     = strcontains(output.mount_commands["warm"], "/mnt/st-test-warm")
    error_message = "the warm mount command does not mount at /mnt/st-test-warm: ${output.mount_commands["warm"]}"
  }
  assert {
    condition     = output.hot_data_disk.performance_level == "PL3" && output.hot_data_disk.size_gib >= 1261
    error_message = "expected an ESSD PL3 data disk for 1M IOPS, got ${jsonencode(output.hot_data_disk)}"
  }
  assert {
    condition     = output.expected["hot"].throughput_gbps >= 4
    error_message = "the hot tier does not reach 4 GB/s: ${jsonencode(output.expected["hot"])}"
  }
  assert {
    condition     = strcontains(output.alluxio_properties, "st-test-cold-0001")
    error_message = "alluxio_properties does not mount the bucket"
  }
  # Hot: CPFS advance_200, 20 TiB x 1,024 GiB x 1.4 CNY / 720 h. Cold: OSS Standard, 1,024 TiB
  # x 1,099.51 GB x 0.12 CNY / 720 h. The total is the priced tiers; the rest are named.
  assert {
    condition     = abs(output.hourly_prices["hot"] - 20 * 1024 * 1.4 / 720) < 0.001 && abs(output.hourly_prices["cold"] - 1024 * 1099.511627776 * 0.12 / 720) < 0.001
    error_message = "hot and cold tiers are priced from the list prices: ${jsonencode(output.hourly_prices)}"
  }
  assert {
    condition     = abs(output.estimated_hourly_price - sum([for k, v in output.hourly_prices : v if v != null])) < 0.001 && output.unpriced == [for k, v in output.hourly_prices : k if v == null]
    error_message = "the total is the priced tiers, the unpriced are listed: ${jsonencode(output.hourly_prices)} ${output.estimated_hourly_price} ${jsonencode(output.unpriced)}"
  }
}

run "cold_only" {
  command = plan

  variables {
    name = "st-cold"
    cold = {
      capacity_tib = 10
    }
  }

  assert {
    condition     = output.hot_data_disk == null && output.alluxio_properties == null
    error_message = "a cold tier alone must give no data disk and no Alluxio properties"
  }
}

run "hot_without_network" {
  command = plan

  variables {
    name = "st-nonet"
    hot = {
      capacity_tib = 10
    }
  }

  expect_failures = [gpucluster_storage_tier.hot]
}

run "iops_above_one_disk" {
  command = plan

  variables {
    name       = "st-iops"
    network_id = run.network.network_id
    hot = {
      capacity_tib = 10
      min_iops     = 2000000
    }
  }

  expect_failures = [var.hot]
}
